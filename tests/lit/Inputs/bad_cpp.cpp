// tlc input with a C++ error on line 4.
#include "tl/dsl.h"

int broken = undeclared_name;
