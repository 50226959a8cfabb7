#include "_perfcast_types.h"
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void free(void *pointer);
int abs(int value);
long labs(long value);
int rand(void);
