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

/// A fresh module state: its own context, no module yet.
std::shared_ptr<ModuleHandle::State> newState(const std::string &name) {
  auto state = std::make_shared<ModuleHandle::State>();
  state->context = makeContext();
  state->name = name;
  return state;
}

} // namespace

ProgramImpl::ProgramImpl(const std::string &programName, SourceLoc loc)
    : handle(newState(programName)), name(handle.state().name), context(handle.state().context),
      module(handle.state().module), params(handle.state().params),
      broken(handle.state().incomplete), builder(context.get()) {
  Location location = toLocation(*this, loc);
  module = ModuleOp::create(location);
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, location, name, builder.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  func::ReturnOp::create(builder, location);
  builder.setInsertionPoint(entry->getTerminator());
}

ProgramImpl::ProgramImpl(ModuleHandle parsed)
    : handle(std::move(parsed)), name(handle.state().name), context(handle.state().context),
      module(handle.state().module), params(handle.state().params),
      broken(handle.state().incomplete), builder(context.get()), hasKernel(true) {
  module->walk([&](func::FuncOp candidate) {
    if (candidate.getSymName() == name)
      func = candidate;
  });
}

ProgramImpl &activeProgram(const char *what, SourceLoc loc) {
  if (!currentProgram)
    fail(loc, fmt::format("{} must be called inside a kernel body", what));
  currentSourceLoc = loc;
  return *currentProgram;
}

ProgramImpl &activeProgram(const char *what) {
  if (!currentProgram)
    fail(currentSourceLoc, fmt::format("{} must be built inside a kernel body", what));
  return *currentProgram;
}

SourceLoc lastSourceLoc() { return currentSourceLoc; }

ActiveProgramScope::ActiveProgramScope(ProgramImpl &program) : previous_(currentProgram) {
  currentProgram = &program;
}
ActiveProgramScope::~ActiveProgramScope() { currentProgram = previous_; }

Location toLocation(ProgramImpl &program, SourceLoc loc) {
  currentSourceLoc = loc;
  return FileLineColLoc::get(program.context.get(), loc.file_name(), loc.line(), loc.column());
}

Location lastLocation(ProgramImpl &program) {
  return FileLineColLoc::get(program.context.get(), currentSourceLoc.file_name(),
                             currentSourceLoc.line(), currentSourceLoc.column());
}

void fail(SourceLoc loc, const std::string &message) {
  throw Error(message, loc.file_name(), loc.line(), loc.column());
}

void verifyOrThrow(ProgramImpl &program, Operation *op, bool recursive) {
  try {
    tl::verifyOrThrow(op, recursive);
  } catch (const Error &) {
    program.broken = true;
    throw;
  }
}

Type toMLIR(MLIRContext *context, DType type) { return mlirType(context, type); }

DType fromMLIR(Type type, Location loc) {
  if (std::optional<DType> dtype = dtypeOf(type))
    return *dtype;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  failAt(loc, "unsupported element type " + text);
}

Value unwrap(const Buffer &buffer) { return Value::getFromOpaquePointer(buffer.handle()); }

Buffer wrapBuffer(Value value, std::string name) {
  auto type = cast<MemRefType>(value.getType());
  Scope scope = static_cast<Scope>(tl::getMemoryScope(type));
  return Buffer(value.getAsOpaquePointer(), std::move(name),
                std::vector<std::int64_t>(type.getShape().begin(), type.getShape().end()),
                fromMLIR(type.getElementType(), value.getLoc()), scope);
}

Expr wrap(Value value) {
  return Expr::fromHandle(value.getAsOpaquePointer(), fromMLIR(value.getType(), value.getLoc()));
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
    return type.isIndex() ? b.createOrFold<arith::IndexCastOp>(loc, type, result) : result;
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

Value materialize(ProgramImpl &program, const Expr &expr, Type type, Location loc) {
  OpBuilder &b = program.builder;
  if (!expr.valid())
    failAt(loc, "use of an empty expression (a default-constructed Expr)");
  if (!expr.isLiteral())
    return convert(program, Value::getFromOpaquePointer(expr.handle()), type, loc);
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, expr.literalValue()));
  if (!expr.isIntLiteral()) {
    double value = expr.literalValue();
    if (value != static_cast<double>(static_cast<std::int64_t>(value)))
      failAt(loc, fmt::format("the float {} is used where an integer is needed", value));
  }
  auto value = static_cast<std::int64_t>(expr.literalValue());
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, value);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value materialize(ProgramImpl &program, const Expr &expr, Location loc) {
  return materialize(program, expr, toMLIR(program.context.get(), expr.dtype()), loc);
}

void buildBody(ProgramImpl &program, mlir::Region &region, unsigned numIndices, int arity,
               const Body &body, const char *what, SourceLoc loc) {
  if (arity != static_cast<int>(numIndices))
    fail(loc, fmt::format("{} has {} dimension(s) but its body takes {} "
                          "index argument(s)",
                          what, numIndices, arity));
  Location location = toLocation(program, loc);
  Block *block = new Block();
  region.push_back(block);
  std::vector<Expr> indices;
  for (unsigned i = 0; i < numIndices; ++i)
    indices.push_back(wrap(block->addArgument(program.builder.getIndexType(), location)));
  InsertionScope scope(program);
  program.builder.setInsertionPointToStart(block);
  body(indices);
}

} // namespace tl::dsl::detail
