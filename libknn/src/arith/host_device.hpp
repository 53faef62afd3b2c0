#pragma once
// KNN_HD marks a function that both backends compile: the host's C++ and nvcc's device code.
// The translation units that call the rules in arith/ contract no multiply and add into an FMA
// (-ffp-contract=off on the host, --fmad=false under nvcc), so each operation rounds as written
// and both sides give the same bits.
#if defined(__CUDACC__)
#define KNN_HD __host__ __device__
#else
#define KNN_HD
#endif
