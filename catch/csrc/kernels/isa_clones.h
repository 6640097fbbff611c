// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause
//
// CATCH_ISA_CLONES: a function built three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the baseline ISA,
// the best one picked at load time (GCC target_clones). For the loops on GCC vector extensions in Catch's kernels
// (attention_rows.cpp, pool.cpp, ...); elsewhere (other compilers, other architectures) one plain build.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CATCH_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CATCH_ISA_CLONES
#endif
