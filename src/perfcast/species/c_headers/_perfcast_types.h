/* perfcast's stand-in system headers: just enough declarations for pycparser to parse
 * numeric C code after `gcc -E -nostdinc`.  The real headers use GNU extensions that a
 * C99 parser does not accept; classification needs only the type names and constants. */
#ifndef PERFCAST_TYPES_H
#define PERFCAST_TYPES_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long ssize_t;
typedef int wchar_t;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
typedef int _Bool_stand_in;
typedef struct _perfcast_file FILE;
#define NULL ((void *)0)
#endif
