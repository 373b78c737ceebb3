// The tl eDSL: everything a kernel author includes. No MLIR inside, so a
// kernel file compiles in about a second.
#pragma once

#include "tl/dsl/Buffer.h"
#include "tl/dsl/Expr.h"
#include "tl/dsl/Generator.h"
#include "tl/dsl/Layout.h"
#include "tl/dsl/Program.h"
#include "tl/dsl/TileOps.h"
#include "tl/dsl/Types.h"
