#include "sim/store.h"
