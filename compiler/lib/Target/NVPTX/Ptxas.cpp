//===- Ptxas.cpp - PTX to cubin with the CUDA toolkit's assembler ---------===//
//
// ptxas runs as a child process (posix_spawn, no shell) on files in a private
// temporary directory, which is removed afterwards.
//
//===----------------------------------------------------------------------===//
#include "tl/Compiler/Ptxas.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

extern char **environ;

namespace tl {
namespace fs = std::filesystem;

namespace {

bool executable(const fs::path &path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

std::string readAll(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A private directory, removed with its contents on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tlc-ptxas-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("ptxas: cannot create a temporary directory");
    path = pattern;
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path, error);
  }
};

} // namespace

std::string findPtxas() {
  if (const char *chosen = std::getenv("TLC_PTXAS"); chosen && *chosen) {
    std::string value = chosen;
    if (value == "0" || value == "off")
      return "";
    return executable(value) ? value : "";
  }
  if (const char *path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && executable(fs::path(dir) / "ptxas"))
        return (fs::path(dir) / "ptxas").string();
  }
  return executable("/usr/local/cuda/bin/ptxas") ? "/usr/local/cuda/bin/ptxas" : "";
}

std::string assembleCubin(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                          std::string *report) {
  TempDir dir;
  fs::path input = dir.path / "kernel.ptx", output = dir.path / "kernel.cubin",
           log = dir.path / "ptxas.log";
  std::ofstream(input, std::ios::binary) << ptx;
  std::vector<std::string> args = {ptxas,          "-v", "-arch=" + arch,
                                   input.string(), "-o", output.string()};
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("ptxas: cannot run " + ptxas);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string messages = readAll(log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(output))
    throw std::runtime_error("ptxas -arch=" + arch + " failed:\n" + messages);
  if (report)
    *report = messages;
  return readAll(output);
}

std::vector<std::string> slowPathNotes(const std::string &report) {
  std::vector<std::string> notes;
  std::istringstream lines(report);
  static const std::regex spills("(\\d+) bytes spill stores, (\\d+) bytes spill loads");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, spills)) {
      if (match[1] != "0" || match[2] != "0")
        notes.push_back("ptxas: " + match[0].str() + " (registers spilled to local memory)");
    } else if (line.find("(C75") != std::string::npos ||
               line.find("warning") != std::string::npos) {
      std::size_t colon = line.find(" : ");
      notes.push_back("ptxas: " + (colon == std::string::npos ? line : line.substr(colon + 3)));
    }
  }
  return notes;
}

} // namespace tl
