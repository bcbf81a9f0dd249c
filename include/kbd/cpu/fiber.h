/* kbd/cpu/fiber.h - stackful fibers for the CPU machine: one fiber per warp.
 *
 * Why hand-written switching: a warp blocks at every barrier, so a CTA of 8 warps switches context
 * 16+ times per bar.sync. glibc's swapcontext makes a sigprocmask system call on every switch
 * (~0.3-1 us); the x86-64 switch below saves the six callee-saved integer registers and costs a few
 * nanoseconds. MXCSR and the x87 control word are those of the host thread running the block
 * and are not switched: ldmxcsr/fldcw are slow, and kernel code has no business changing the host rounding
 * mode - PTX rounding is per instruction - so all warps always share the launcher's. Other hosts use
 * ucontext.
 *
 * AddressSanitizer must know which stack the thread is on: at a noreturn call (a warp's fault) it unpoisons
 * the current stack, and on a warp's mmap'd stack it does not know it ("ASan is ignoring requested
 * __asan_handle_no_return ... False positive error reports may follow"); its use-after-return frames live
 * in a per-stack fake stack; and a stack reused by the next launch still carries the redzones of frames that
 * never returned. So under ASan every switch is announced (__sanitizer_start_switch_fiber before it,
 * __sanitizer_finish_switch_fiber after it, on the new stack: <sanitizer/common_interface_defs.h>), each
 * fiber keeps its own fake stack, and a stack is unpoisoned whenever a fiber is built on it or it is unmapped.
 */
#ifndef KBD_CPU_FIBER_H
#define KBD_CPU_FIBER_H

#include "../config.h"

#if KBD_MODE_CPU

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* gcc says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer). */
#ifndef KBD_FIBER_ASAN /* -DKBD_FIBER_ASAN=0: no annotations (to see what ASan reports without them) */
#if defined(__SANITIZE_ADDRESS__)
#define KBD_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KBD_FIBER_ASAN 1
#endif
#endif
#endif
#ifndef KBD_FIBER_ASAN
#define KBD_FIBER_ASAN 0
#endif
#if KBD_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

typedef void (*kbd_fiber_fn)(void *arg);

#if defined(__x86_64__) && !defined(KBD_CPU_UCONTEXT)
#define KBD_FIBER_X64 1
#else
#define KBD_FIBER_X64 0
#include <ucontext.h>
#endif

typedef struct kbd_fiber {
#if KBD_FIBER_X64
  void *sp; /* saved stack pointer; the callee-saved registers sit just above it */
#else
  ucontext_t uc;
#endif
#if KBD_FIBER_ASAN
  /* ASan's view: the fiber's stack (for the host thread's own stack, learned when a warp is entered from
   * it), the fake stack of its use-after-return frames while it is switched out, and for its first entry
   * the function to run (the entry trampoline completes the switch before calling it). */
  const void *asan_stack;
  size_t asan_size;
  void *asan_fake;
  kbd_fiber_fn asan_fn;
  void *asan_arg;
#endif
} kbd_fiber;

#if KBD_FIBER_ASAN
/* The fiber that switched last on this host thread: the one resumed learns from it whose stack it left. */
KBD_WEAK __thread kbd_fiber *kbd_fiber_asan_from = NULL;

/* A fiber's last switch (`last`: a finished or faulted warp) keeps its fake stack all the same, with the
 * frames that returned marked as such: a later read of one of them - another warp reading what a finished warp
 * left on its stack - is then reported as stack-use-after-return instead of touching an unmapped fake stack.
 * It is freed when a fiber is built on the stack again (kbd_fiber_asan_drop). */
static inline void kbd_fiber_asan_start(kbd_fiber *from, const kbd_fiber *to, int last) {
  (void)last;
  kbd_fiber_asan_from = from;
  __sanitizer_start_switch_fiber(&from->asan_fake, to->asan_stack, to->asan_size);
}
/* Free a dead fiber's fake stack. ASan frees only the fake stack current at a switch given no save slot, so
 * the host thread makes it current for a moment: a switch to nowhere that returns with it, a last switch back
 * (which frees it), and the host thread's own fake stack restored. */
static inline void kbd_fiber_asan_drop(void *fake) {
  void *mine = NULL;
  const void *bottom = NULL;
  size_t size = 0;
  __sanitizer_start_switch_fiber(&mine, NULL, 0);
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  __sanitizer_start_switch_fiber(NULL, bottom, size);
  __sanitizer_finish_switch_fiber(mine, NULL, NULL);
}
static inline void kbd_fiber_asan_finish(void *fake) {
  kbd_fiber *prev = kbd_fiber_asan_from;
  __sanitizer_finish_switch_fiber(fake, &prev->asan_stack, &prev->asan_size);
}
/* A fiber's first code: nothing of it to restore yet, then its function. */
static inline void kbd_fiber_asan_entry(void *arg) {
  kbd_fiber *f = (kbd_fiber *)arg;
  kbd_fiber_asan_finish(NULL);
  f->asan_fn(f->asan_arg);
}
/* The stack's previous fiber left the redzones of its frames that never returned: unpoison them. The new
 * fiber starts in the trampoline with itself as argument. */
static inline void kbd_fiber_asan_init(kbd_fiber *f, void *stack, size_t size, kbd_fiber_fn *fn, void **arg) {
  if (f->asan_fake) kbd_fiber_asan_drop(f->asan_fake);
  ASAN_UNPOISON_MEMORY_REGION(stack, size);
  f->asan_stack = stack;
  f->asan_size = size;
  f->asan_fake = NULL;
  f->asan_fn = *fn;
  f->asan_arg = *arg;
  *fn = kbd_fiber_asan_entry;
  *arg = f;
}
#define KBD_FIBER_ASAN_START(from, to, last) kbd_fiber_asan_start(from, to, last)
#define KBD_FIBER_ASAN_FINISH(from) kbd_fiber_asan_finish((from)->asan_fake)
#define KBD_FIBER_ASAN_INIT(f, stack, size, fn, arg) kbd_fiber_asan_init(f, stack, size, fn, arg)
#else
#define KBD_FIBER_ASAN_START(from, to, last) ((void)0)
#define KBD_FIBER_ASAN_FINISH(from) ((void)0)
#define KBD_FIBER_ASAN_INIT(f, stack, size, fn, arg) ((void)0)
#endif

#if KBD_FIBER_X64
/* Defined once for the whole program: the symbols are weak, so every translation unit that includes
 * this header may emit them and the linker keeps one copy. */
__asm__(".text\n"
        ".weak kbd_fiber_swap_x64\n"
        ".type kbd_fiber_swap_x64,@function\n"
        "kbd_fiber_swap_x64:\n" /* rdi: void **save_sp, rsi: void *load_sp */
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $16, %rsp\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  addq $16, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size kbd_fiber_swap_x64, .-kbd_fiber_swap_x64\n"
        ".weak kbd_fiber_boot_x64\n"
        ".type kbd_fiber_boot_x64,@function\n"
        "kbd_fiber_boot_x64:\n" /* first entry of a fiber: r12 = arg, rbx = fn; fn never returns */
        "  movq %r12, %rdi\n"
        "  callq *%rbx\n"
        "  ud2\n"
        ".size kbd_fiber_boot_x64, .-kbd_fiber_boot_x64\n");

KBD_EXTERN_C void kbd_fiber_swap_x64(void **save_sp, void *load_sp);
KBD_EXTERN_C void kbd_fiber_boot_x64(void);

/* Prepare `f` to start fn(arg) on [stack, stack+size) at its first kbd_fiber_switch. */
static inline void kbd_fiber_init(kbd_fiber *f, void *stack, size_t size, kbd_fiber_fn fn, void *arg) {
  KBD_FIBER_ASAN_INIT(f, stack, size, &fn, &arg);
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  /* 88 bytes: 16 reserved, r15 r14 r13 r12 rbx rbp, return address. After the final `ret`
   * the stack pointer is top-16, 16-byte aligned, so the `call` in boot gives fn the ABI alignment. */
  uint64_t *sp = (uint64_t *)(top - 88);
  memset(sp, 0, 88);
  sp[5] = (uint64_t)(uintptr_t)arg; /* r12 */
  sp[6] = (uint64_t)(uintptr_t)fn;  /* rbx */
  sp[7] = 0;                        /* rbp: terminates frame-pointer walks in gdb */
  sp[8] = (uint64_t)(uintptr_t)&kbd_fiber_boot_x64;
  f->sp = sp;
}

static inline void kbd_fiber_switch(kbd_fiber *from, kbd_fiber *to) {
  KBD_FIBER_ASAN_START(from, to, 0);
  kbd_fiber_swap_x64(&from->sp, to->sp);
  KBD_FIBER_ASAN_FINISH(from);
}

/* The last switch out of a fiber that is never resumed (a finished or faulted warp). */
KBD_NORETURN static inline void kbd_fiber_exit(kbd_fiber *from, kbd_fiber *to) {
  KBD_FIBER_ASAN_START(from, to, 1);
  kbd_fiber_swap_x64(&from->sp, to->sp);
  abort();
}

#else /* portable fallback */

static inline void kbd_fiber_init(kbd_fiber *f, void *stack, size_t size, kbd_fiber_fn fn, void *arg) {
  KBD_FIBER_ASAN_INIT(f, stack, size, &fn, &arg);
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = stack;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = NULL;
  /* makecontext passes int arguments: split the pointer in two 32-bit halves. */
  makecontext(&f->uc, (void (*)(void))fn, 1, arg);
}

static inline void kbd_fiber_switch(kbd_fiber *from, kbd_fiber *to) {
  KBD_FIBER_ASAN_START(from, to, 0);
  swapcontext(&from->uc, &to->uc);
  KBD_FIBER_ASAN_FINISH(from);
}

KBD_NORETURN static inline void kbd_fiber_exit(kbd_fiber *from, kbd_fiber *to) {
  KBD_FIBER_ASAN_START(from, to, 1);
  swapcontext(&from->uc, &to->uc);
  abort();
}
#endif

/* Fiber stacks come from mmap with a PROT_NONE guard page below each stack, so a kernel whose tiles
 * overflow the stack faults at once instead of corrupting its neighbour warp. */
typedef struct kbd_stack_pool {
  unsigned char *base;
  size_t each;  /* usable bytes per stack */
  size_t count; /* stacks */
  size_t total; /* mapped bytes */
  size_t page;  /* guard size (sysconf is too slow to ask per warp) */
} kbd_stack_pool;

#if defined(MAP_ANONYMOUS)
#define KBD_STACK_PAGE ((size_t)sysconf(_SC_PAGESIZE))
#else /* a system header came before kbd's without _DEFAULT_SOURCE: no guard pages */
#define KBD_STACK_PAGE ((size_t)64)
#endif

static inline int kbd_stack_pool_init(kbd_stack_pool *p, size_t count, size_t bytes) {
  size_t page = KBD_STACK_PAGE;
  size_t each = (bytes + page - 1) / page * page;
  p->total = count * (each + page);
#if defined(MAP_ANONYMOUS)
  p->base = (unsigned char *)mmap(NULL, p->total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p->base == (unsigned char *)MAP_FAILED) {
    p->base = NULL;
    return 0;
  }
  for (size_t i = 0; i < count; ++i)
    mprotect(p->base + i * (each + page), page, PROT_NONE);
#else
  p->base = (unsigned char *)malloc(p->total);
  if (!p->base) return 0;
#endif
  p->each = each;
  p->count = count;
  p->page = page;
  return 1;
}

static inline void *kbd_stack_pool_get(const kbd_stack_pool *p, size_t i) {
  return p->base + i * (p->each + p->page) + p->page;
}

static inline void kbd_stack_pool_free(kbd_stack_pool *p) {
#if KBD_FIBER_ASAN
  /* The range may be mapped again for anything else: leave no fiber redzones in its shadow. */
  if (p->base) ASAN_UNPOISON_MEMORY_REGION(p->base, p->total);
#endif
#if defined(MAP_ANONYMOUS)
  if (p->base) munmap(p->base, p->total);
#else
  free(p->base);
#endif
  p->base = NULL;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_FIBER_H */
