// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Force-included in every C++ translation unit of the extension (CMakeLists.txt).
//
// Why: the wheel promises manylinux_2_28, whose libstdc++ (gcc 8 era) exports
// GLIBCXX_3.4.25 at most; torch itself needs at most GLIBCXX_3.4.22. gcc 12's
// libstdc++ added a new default version of
// std::condition_variable::wait(std::unique_lock<std::mutex>&) at
// GLIBCXX_3.4.30; the same function is still exported at its original version,
// GLIBCXX_3.4.11. Binding references to the old version keeps the extension
// loadable next to an older libstdc++ (tests/backend/test_fixes_symbols.py).
#pragma once

#if defined(__x86_64__) && defined(__linux__) && defined(__cplusplus)
#if __has_include(<bits/c++config.h>)
#include <bits/c++config.h>
#endif
#if defined(__GLIBCXX__)
__asm__(".symver _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
        "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
#endif
#endif
