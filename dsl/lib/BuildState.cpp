//===- BuildState.cpp - programs, locations, errors, conversions ----------===//
#include "BuildState.h"

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <fmt/format.h>

using namespace mlir;

namespace tl::dsl::detail {
namespace {

thread_local ProgramImpl *currentProgram = nullptr;
thread_local SourceLoc currentSourceLoc;

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  tl::registerTLDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

/// The first file:line:col location inside `loc` (fused, call-site, named).
std::optional<FileLineColLoc> findFileLocation(Location loc) {
  std::optional<FileLineColLoc> found;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      found = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

} // namespace

ProgramImpl::ProgramImpl(const std::string &programName, SourceLoc loc)
    : name(programName), context(makeContext()), builder(context.get()) {
  Location location = toLocation(*this, loc);
  module = ModuleOp::create(location);
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, location, name,
                              builder.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  func::ReturnOp::create(builder, location);
  builder.setInsertionPoint(entry->getTerminator());
}

ProgramImpl &activeProgram(const char *what, SourceLoc loc) {
  if (!currentProgram)
    fail(loc, fmt::format("{} must be called inside a kernel body", what));
  currentSourceLoc = loc;
  return *currentProgram;
}

ProgramImpl &activeProgram(const char *what) {
  if (!currentProgram)
    fail(currentSourceLoc,
         fmt::format("{} must be built inside a kernel body", what));
  return *currentProgram;
}

SourceLoc lastSourceLoc() { return currentSourceLoc; }

ActiveProgramScope::ActiveProgramScope(ProgramImpl &program)
    : previous_(currentProgram) {
  currentProgram = &program;
}
ActiveProgramScope::~ActiveProgramScope() { currentProgram = previous_; }

Location toLocation(ProgramImpl &program, SourceLoc loc) {
  currentSourceLoc = loc;
  return FileLineColLoc::get(program.context.get(), loc.file_name(), loc.line(),
                             loc.column());
}

Location lastLocation(ProgramImpl &program) {
  return FileLineColLoc::get(program.context.get(),
                             currentSourceLoc.file_name(),
                             currentSourceLoc.line(), currentSourceLoc.column());
}

void fail(SourceLoc loc, const std::string &message) {
  throw Error(message, loc.file_name(), loc.line(), loc.column());
}

void failAt(Location loc, const std::string &message) {
  if (std::optional<FileLineColLoc> file = findFileLocation(loc))
    throw Error(message, file->getFilename().str(), file->getLine(),
                file->getColumn());
  throw Error(message, "<unknown>", 0, 0);
}

void verifyOrThrow(ProgramImpl &program, Operation *op, bool recursive) {
  std::optional<Location> where;
  std::string message;
  ScopedDiagnosticHandler handler(program.context.get(), [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error || where)
      return success();
    where = diag.getLocation();
    message = diag.str();
    for (Diagnostic &note : diag.getNotes())
      if (!StringRef(note.str()).starts_with("see current operation"))
        message += "; " + note.str();
    return success();
  });
  if (succeeded(verify(op, recursive)))
    return;
  program.broken = true;
  failAt(where.value_or(op->getLoc()),
         message.empty() ? "verification failed" : message);
}

void runPipelineOrThrow(ProgramImpl &program, ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build,
                        const std::string &what, bool printIRAfterAll) {
  MLIRContext *context = program.context.get();
  std::optional<Location> where;
  std::string message;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && !where) {
      where = diag.getLocation();
      message = diag.str();
    }
    return success();
  });
  PassManager pm(context);
  if (printIRAfterAll)
    pm.enableIRPrinting();
  build(pm);
  if (failed(pm.run(module)))
    failAt(where.value_or(module.getLoc()), what + ": " + message);
}

Type toMLIR(MLIRContext *context, DType type) {
  Builder b(context);
  switch (type) {
  case DType::f16: return b.getF16Type();
  case DType::bf16: return b.getBF16Type();
  case DType::f32: return b.getF32Type();
  case DType::f64: return b.getF64Type();
  case DType::i1: return b.getI1Type();
  case DType::i8: return b.getI8Type();
  case DType::i16: return b.getI16Type();
  case DType::i32: return b.getI32Type();
  case DType::i64: return b.getI64Type();
  case DType::index: return b.getIndexType();
  }
  return {};
}

DType fromMLIR(Type type, Location loc) {
  if (type.isF16()) return DType::f16;
  if (type.isBF16()) return DType::bf16;
  if (type.isF32()) return DType::f32;
  if (type.isF64()) return DType::f64;
  if (type.isIndex()) return DType::index;
  if (type.isInteger(1)) return DType::i1;
  if (type.isInteger(8)) return DType::i8;
  if (type.isInteger(16)) return DType::i16;
  if (type.isInteger(32)) return DType::i32;
  if (type.isInteger(64)) return DType::i64;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  failAt(loc, "unsupported element type " + text);
}

Value unwrap(const Buffer &buffer) {
  return Value::getFromOpaquePointer(buffer.handle());
}

Buffer wrapBuffer(Value value, std::string name) {
  auto type = cast<MemRefType>(value.getType());
  Scope scope = static_cast<Scope>(tl::getMemoryScope(type));
  return Buffer(value.getAsOpaquePointer(), std::move(name),
                std::vector<std::int64_t>(type.getShape().begin(),
                                          type.getShape().end()),
                fromMLIR(type.getElementType(), value.getLoc()), scope);
}

Expr wrap(Value value) {
  return Expr::fromHandle(value.getAsOpaquePointer(),
                          fromMLIR(value.getType(), value.getLoc()));
}

Value convert(ProgramImpl &program, Value value, Type type, Location loc) {
  OpBuilder &b = program.builder;
  Type from = value.getType();
  if (from == type)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(type);
  if (fromFloat && toFloat)
    return fromFloat.getWidth() < toFloat.getWidth()
               ? b.createOrFold<arith::ExtFOp>(loc, type, value)
               : b.createOrFold<arith::TruncFOp>(loc, type, value);
  if (toFloat) {
    if (from.isIndex())
      value = b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), value);
    if (value.getType().isInteger(1))
      return b.createOrFold<arith::UIToFPOp>(loc, type, value);
    return b.createOrFold<arith::SIToFPOp>(loc, type, value);
  }
  if (fromFloat) {
    Type intType = type.isIndex() ? b.getI64Type() : type;
    Value result = b.createOrFold<arith::FPToSIOp>(loc, intType, value);
    return type.isIndex()
               ? b.createOrFold<arith::IndexCastOp>(loc, type, result)
               : result;
  }
  if (from.isIndex() || type.isIndex())
    return b.createOrFold<arith::IndexCastOp>(loc, type, value);
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = type.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return fromWidth == 1 ? b.createOrFold<arith::ExtUIOp>(loc, type, value)
                          : b.createOrFold<arith::ExtSIOp>(loc, type, value);
  return b.createOrFold<arith::TruncIOp>(loc, type, value);
}

Value materialize(ProgramImpl &program, const Expr &expr, Type type,
                  Location loc) {
  OpBuilder &b = program.builder;
  if (!expr.valid())
    failAt(loc, "use of an empty expression (a default-constructed Expr)");
  if (!expr.isLiteral())
    return convert(program, Value::getFromOpaquePointer(expr.handle()), type,
                   loc);
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(floatType, expr.literalValue()));
  if (!expr.isIntLiteral()) {
    double value = expr.literalValue();
    if (value != static_cast<double>(static_cast<std::int64_t>(value)))
      failAt(loc, fmt::format("the float {} is used where an integer is needed",
                              value));
  }
  auto value = static_cast<std::int64_t>(expr.literalValue());
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, value);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value materialize(ProgramImpl &program, const Expr &expr, Location loc) {
  return materialize(program, expr,
                     toMLIR(program.context.get(), expr.dtype()), loc);
}

void buildBody(ProgramImpl &program, mlir::Region &region, unsigned numIndices,
               int arity, const Body &body, const char *what, SourceLoc loc) {
  if (arity != static_cast<int>(numIndices))
    fail(loc, fmt::format("{} has {} dimension(s) but its body takes {} "
                          "index argument(s)",
                          what, numIndices, arity));
  Location location = toLocation(program, loc);
  Block *block = new Block();
  region.push_back(block);
  std::vector<Expr> indices;
  for (unsigned i = 0; i < numIndices; ++i)
    indices.push_back(
        wrap(block->addArgument(program.builder.getIndexType(), location)));
  InsertionScope scope(program);
  program.builder.setInsertionPointToStart(block);
  body(indices);
}

} // namespace tl::dsl::detail
