#include "_perfcast_types.h"
#define assert(x) ((void)0)
