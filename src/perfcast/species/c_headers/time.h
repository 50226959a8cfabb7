#include "_perfcast_types.h"
