/* kbd/cpu/mma.h - MMA twins (docs/design/mma.md): being written. */
#ifndef KBD_CPU_MMA_H
#define KBD_CPU_MMA_H
#endif
