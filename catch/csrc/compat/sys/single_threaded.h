// SPDX-FileCopyrightText: 2026 Catch Developers
// SPDX-License-Identifier: BSD-3-Clause

// Compat shadow of glibc's <sys/single_threaded.h>, first on the include path.
//
// Why: the wheel promises manylinux_2_28 (glibc 2.28), but glibc >= 2.32 ships
// this header, and when it exists libstdc++'s <ext/atomicity.h> (gcc >= 11)
// reads `::__libc_single_threaded` to skip atomic reference counting in
// single-threaded processes. That makes the extension import the symbol
// __libc_single_threaded@GLIBC_2.32, which an older glibc cannot resolve.
//
// This replacement answers "not single-threaded" at compile time, so
// libstdc++ always takes its atomic path: correct in every process (it is
// what libstdc++ does without the header), at the cost of that shortcut.
#pragma once

static const char __libc_single_threaded = 0;
