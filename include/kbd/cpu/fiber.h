/* kbd/cpu/fiber.h - stackful fibers for the CPU machine: one fiber per warp.
 *
 * Why hand-written switching: a warp blocks at every barrier, so a CTA of 8 warps switches context
 * 16+ times per bar.sync. glibc's swapcontext makes a sigprocmask system call on every switch
 * (~0.3-1 us); the x86-64 switch below saves the six callee-saved integer registers and costs a few
 * nanoseconds. MXCSR and the x87 control word are those of the host thread running the block
 * and are not switched: ldmxcsr/fldcw are slow, and kernel code has no business changing the host rounding
 * mode - PTX rounding is per instruction - so all warps always share the launcher's. Other hosts use
 * ucontext.
 */
#ifndef KBD_CPU_FIBER_H
#define KBD_CPU_FIBER_H

#include "../config.h"

#if KBD_MODE_CPU

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void (*kbd_fiber_fn)(void *arg);

#if defined(__x86_64__) && !defined(KBD_CPU_UCONTEXT)
#define KBD_FIBER_X64 1

typedef struct kbd_fiber {
  void *sp; /* saved stack pointer; the callee-saved registers sit just above it */
} kbd_fiber;

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

static inline void kbd_fiber_switch(kbd_fiber *from, kbd_fiber *to) { kbd_fiber_swap_x64(&from->sp, to->sp); }

#else /* portable fallback */
#include <ucontext.h>
#define KBD_FIBER_X64 0

typedef struct kbd_fiber {
  ucontext_t uc;
} kbd_fiber;

static inline void kbd_fiber_init(kbd_fiber *f, void *stack, size_t size, kbd_fiber_fn fn, void *arg) {
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = stack;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = NULL;
  /* makecontext passes int arguments: split the pointer in two 32-bit halves. */
  makecontext(&f->uc, (void (*)(void))fn, 1, arg);
}

static inline void kbd_fiber_switch(kbd_fiber *from, kbd_fiber *to) { swapcontext(&from->uc, &to->uc); }
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
#if defined(MAP_ANONYMOUS)
  if (p->base) munmap(p->base, p->total);
#else
  free(p->base);
#endif
  p->base = NULL;
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_FIBER_H */
