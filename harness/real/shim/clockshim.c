/* clockshim: an LD_PRELOAD library that moves a process's wall clock (and only that).
 *
 * The harness preloads it into the redis-server processes it starts, so that a node's clock can
 * jump during a run (Redis expires keys by its wall clock). It overrides clock_gettime (only
 * CLOCK_REALTIME and CLOCK_REALTIME_COARSE are shifted; every other clock passes through),
 * gettimeofday and time.
 *
 * Why not libfaketime: Debian's libfaketime resolves the real functions with dlsym, which
 * allocates; redis-server's jemalloc reads the clock while it initialises, so the process hangs
 * at start-up ("Unexpected recursive calls to clock_gettime()"). This shim never allocates and
 * never calls dlsym: the real clock_gettime is the kernel's vDSO function, found by reading the
 * vDSO's ELF symbol table in place (getauxval(AT_SYSINFO_EHDR); no allocation), with a raw
 * syscall as the fallback when there is no vDSO; the offset file is opened and mapped with raw
 * syscalls. (A syscall per clock read made the servers measurably slower: Redis reads the clock
 * about 8 times per command.)
 *
 * The offset lives in a file named by LOCKLAB_CLOCK_OFFSET_FILE (see ClockShimPage in
 * harness/real/redis_server.cc for the writer): one page holding
 *   int64 seq;         even = stable; the writer makes it odd while it updates the fields
 *   int64 offset_us;   added to the wall clock
 *   int64 drift_ppb;   the wall clock also runs this many ns per s fast (0 = none)
 *   int64 anchor_us;   real wall time at which drift starts accumulating
 * mapped once, shared, read on every call (a few loads: cheap enough for Redis's hot path).
 * No file, a short file or no variable: offset 0, the process sees the real clocks.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* glibc declares gettimeofday's first argument nonnull; Linux accepts NULL, so we check. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"

struct ClockShimPage {
  int64_t seq;
  int64_t offset_us;
  int64_t drift_ppb;
  int64_t anchor_us;
};

static const volatile struct ClockShimPage* g_page; /* NULL until mapped (or no file) */
static int g_state;                                  /* 0 = not tried, 1 = trying, 2 = done */

typedef int (*ClockGettimeFn)(clockid_t, struct timespec*);

/* The vDSO's __vdso_clock_gettime, or NULL. Reads only memory the kernel mapped (the vDSO image,
 * section headers included) and checks every offset against the image's size. */
static ClockGettimeFn FindVdsoClockGettime(void) {
  const uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return NULL;
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)base;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return NULL;
  /* The image's extent: the end of its section header table bounds everything read below. */
  const uint64_t size = eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_phentsize != sizeof(Elf64_Phdr) || size > (1u << 24))
    return NULL;
  /* Load bias: the first PT_LOAD maps file offset p_offset at base. */
  const Elf64_Phdr* ph = (const Elf64_Phdr*)(base + eh->e_phoff);
  intptr_t bias = 0;
  int have_load = 0;
  for (int i = 0; i < eh->e_phnum && i < 64; ++i)
    if (ph[i].p_type == PT_LOAD) {
      bias = (intptr_t)(base + ph[i].p_offset) - (intptr_t)ph[i].p_vaddr;
      have_load = 1;
      break;
    }
  if (!have_load) return NULL;
  const Elf64_Shdr* sh = (const Elf64_Shdr*)(base + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum && i < 256; ++i) {
    if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= eh->e_shnum)
      continue;
    const Elf64_Shdr* strs = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size) return NULL;
    const Elf64_Sym* syms = (const Elf64_Sym*)(base + sh[i].sh_offset);
    const char* names = (const char*)(base + strs->sh_offset);
    static const char kWanted[] = "__vdso_clock_gettime";
    for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym) && k < 4096; ++k) {
      if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_shndx == SHN_UNDEF) continue;
      if (syms[k].st_name + sizeof kWanted > strs->sh_size) continue;
      if (memcmp(names + syms[k].st_name, kWanted, sizeof kWanted) != 0) continue;
      return (ClockGettimeFn)(bias + (intptr_t)syms[k].st_value);
    }
  }
  return NULL;
}

static ClockGettimeFn g_vdso_clock_gettime; /* valid once g_vdso_state == 2 */
static int g_vdso_state;                    /* 0 = not looked up, 1 = looking, 2 = done */

static int RealClockGettime(clockid_t clk, struct timespec* ts) {
  int state = __atomic_load_n(&g_vdso_state, __ATOMIC_ACQUIRE);
  if (state == 0) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&g_vdso_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      g_vdso_clock_gettime = FindVdsoClockGettime();
      __atomic_store_n(&g_vdso_state, 2, __ATOMIC_RELEASE);
      state = 2;
    }
  }
  if (state == 2 && g_vdso_clock_gettime != NULL) {
    const int rc = g_vdso_clock_gettime(clk, ts); /* the kernel's convention: -errno on failure */
    if (rc >= 0) return rc;
    errno = -rc;
    return -1;
  }
  return (int)syscall(SYS_clock_gettime, clk, ts); /* no vDSO, or another thread is looking it up */
}

/* Maps the offset file on first use. Threads that race the first caller read offset 0 for
 * that one call instead of waiting (no locks: this may run inside malloc's initialisation). */
static const volatile struct ClockShimPage* Page(void) {
  int state = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  if (state == 2) return g_page;
  int expected = 0;
  if (!__atomic_compare_exchange_n(&g_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return NULL;
  const char* path = getenv("LOCKLAB_CLOCK_OFFSET_FILE"); /* no allocation */
  if (path != NULL && path[0] != '\0') {
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      struct stat st;
      if (syscall(SYS_fstat, fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct ClockShimPage)) {
        long p = syscall(SYS_mmap, NULL, sizeof(struct ClockShimPage), PROT_READ, MAP_SHARED, fd, 0);
        if (p != -1) g_page = (const volatile struct ClockShimPage*)p;
      }
      syscall(SYS_close, fd);
    }
  }
  __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
  return g_page;
}

/* How far to move a wall-clock reading of `now_us`, in µs. */
static int64_t ShiftUs(int64_t now_us) {
  const volatile struct ClockShimPage* p = Page();
  if (p == NULL) return 0;
  int64_t offset = 0, drift = 0, anchor = 0;
  /* Seqlock read, bounded: the writer holds the odd state for a few stores only. */
  for (int tries = 0; tries < 64; ++tries) {
    int64_t s1 = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
    offset = p->offset_us;
    drift = p->drift_ppb;
    anchor = p->anchor_us;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    int64_t s2 = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
    if (s1 == s2 && (s1 & 1) == 0) break;
  }
  if (drift != 0 && now_us > anchor) offset += (int64_t)((__int128)(now_us - anchor) * drift / 1000000000);
  return offset;
}

static void ShiftTimespec(struct timespec* ts) {
  int64_t us = (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
  int64_t shift = ShiftUs(us);
  if (shift == 0) return;
  int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + shift * 1000;
  ts->tv_sec = (time_t)(ns / 1000000000);
  ts->tv_nsec = (long)(ns % 1000000000);
  if (ts->tv_nsec < 0) {
    ts->tv_nsec += 1000000000;
    ts->tv_sec -= 1;
  }
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t clk, struct timespec* ts) {
  int rc = RealClockGettime(clk, ts);
  if (rc == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) ShiftTimespec(ts);
  return rc;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  if (tz != NULL) {
    /* The obsolete timezone argument: the kernel's answer, unshifted. */
    struct timeval ignored;
    if (syscall(SYS_gettimeofday, &ignored, tz) != 0) return -1;
  }
  if (tv == NULL) return 0;
  struct timespec ts;
  if (RealClockGettime(CLOCK_REALTIME, &ts) != 0) return -1;
  ShiftTimespec(&ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
  return 0;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  struct timespec ts;
  if (RealClockGettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  ShiftTimespec(&ts);
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
