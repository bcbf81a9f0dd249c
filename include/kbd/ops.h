/* kbd/ops.h - reduction / scan operator ids, shared by device code and host APIs. */
#ifndef KBD_OPS_H
#define KBD_OPS_H

/* SUM, MAX, MIN: every dtype; AND, OR, XOR: i32 only (kbd/reduce.h). */
enum { KBD_RED_SUM = 1, KBD_RED_MAX, KBD_RED_MIN, KBD_RED_AND, KBD_RED_OR, KBD_RED_XOR };

#endif /* KBD_OPS_H */
