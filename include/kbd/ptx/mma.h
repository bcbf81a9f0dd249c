/* kbd/ptx/mma.h - MMA twins (docs/design/mma.md): being written. */
#ifndef KBD_PTX_MMA_H
#define KBD_PTX_MMA_H
#endif
