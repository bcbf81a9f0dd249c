/* kbd/cpu/launch.h - a kernel definition on the CPU machine (twin of ptx/launch.h): the body becomes a
 * static function every warp's fiber runs, and the extern "C" launcher runs the grid on the machine. */
#ifndef KBD_CPU_LAUNCH_H
#define KBD_CPU_LAUNCH_H

#include "../grid.h"
#include "../status.h"
#include "machine.h"

#if KBD_MODE_CPU

#define KBD_HW_KERNEL(name, threads, P, base)                                                                          \
  KBD_STATIC_ASSERT((threads) % 32 == 0 && (threads) >= 32 && (threads) <= 1024, KBD__THREADS_RULE);                   \
  static void name##_kbd_body(P p, KBD__CTA_PARAM(threads, base));                                                     \
  static void name##_kbd_entry(const void *kbd_params_) { name##_kbd_body(*(const P *)kbd_params_, NULL); }            \
  KBD_KERNEL_DECL(name, P);                                                                                            \
  KBD_EXTERN_C kbd_status name(kbd_launch_cfg cfg, P params) {                                                         \
    const kbd_status kbd_s_ = kbd_cpu_launch_kernel(&cfg, (threads), name##_kbd_entry, &params, #name);                \
    kbd_cpu_guard_launch_end(&params); /* the launch's shared-memory guard pages (kbd/cpu/shadow.h) */                 \
    return kbd_s_;                                                                                                     \
  }                                                                                                                    \
  static void name##_kbd_body(KBD_UNUSED P p, KBD_UNUSED KBD__CTA_PARAM(threads, base))

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_LAUNCH_H */
