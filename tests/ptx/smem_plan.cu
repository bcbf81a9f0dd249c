/* PTX/SASS probe for kbd/smem_plan.h (tests/ptx/smem_plan.check), on sm_90a and sm_100a: a layout function
 * (scratch, a 4-stage ring of 128B-swizzled bf16 tiles, full/empty mbarriers, a second ring) evaluated in the
 * kernel folds to constants - the plan total is an immediate in the launch check, every piece's offset an
 * immediate in the shared-memory operands - and the only runtime address math left is the stage index
 * (stage << 13 for the 8 KiB tiles, stage << 3 for the mbarriers). */
#include <kbd/tile.h>
#include <kbd/smem_plan.h>

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) sp_tile;
enum { SP_STAGES = 4 };
typedef struct {
  size_t scratch, a, full, empty, b;
} sp_layout;

/* Worked out by hand (the .check expects these): scratch [0, 20); A ring at 1024, 8 KiB apart, to 33792;
 * full at 33792 (0x8400) and empty at 33824 (0x8420), 8 bytes each; B ring at the next multiple of 1024,
 * 34816, to 67584 = the plan total (the launch check compares with 67583). Element (3, 9) of a tile: line 3
 * (384) + 16-byte chunk 1 XOR 3 = 2 (32) + 2 bytes = 418, so A's is at 1442 + (stage << 13) and B's at
 * 34816 + 418 = 35234 (0x89a2) past A's stage base. */
KBD_HD kbd_smem_plan sp_plan(sp_layout *l, size_t ring) {
  kbd_smem_plan p;
  kbd_smem_plan_init(&p);
  l->scratch = kbd_smem_plan_array(&p, "scratch", float, 5);
  l->a = kbd_smem_plan_stile(&p, "A ring", sp_tile, ring);
  l->full = kbd_smem_plan_mbarriers(&p, "full", ring);
  l->empty = kbd_smem_plan_mbarriers(&p, "empty", ring);
  l->b = kbd_smem_plan_stile(&p, "B ring", sp_tile, ring);
  return p;
}

typedef struct {
  int stage;
  float *out;
  int ring; /* used only with -DSP_RUNTIME_RING */
} sp_params;

/* The checker's self-test: a ring depth known only at run time leaves plan arithmetic in the kernel. */
#ifdef SP_RUNTIME_RING
#define SP_RING(p) ((size_t)(p).ring)
#else
#define SP_RING(p) ((size_t)SP_STAGES)
#endif

KBD_KERNEL(ptx_smem_plan, 128, sp_params) {
  sp_layout l;
  const kbd_smem_plan plan = sp_plan(&l, SP_RING(p));
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  sp_tile a = KBD_SMEM_PLAN_STILE(sp_tile, smem, l.a, p.stage);
  sp_tile b = KBD_SMEM_PLAN_STILE(sp_tile, smem, l.b, p.stage);
  kbd_mbarrier *full = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.full);
  kbd_mbarrier *empty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.empty);
  float *scratch = KBD_SMEM_PLAN_ARRAY(float, smem, l.scratch);
  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(&full[p.stage], 1);
      kbd_mbarrier_init(&empty[p.stage], 1);
      kbd_st_shared(kbd_stile_ptr(a, 3, 9), kbd_f32_to_bf16(1.0f));
      kbd_st_shared(&scratch[4], 2.0f);
    }
  }
  kbd_sync();
  KBD_FOR_LANES(lane) {
    p.out[kbd_thread_idx(lane)] = kbd_bf16_to_f32(kbd_ld_shared(kbd_stile_ptr(b, 3, 9))) + kbd_ld_shared(&scratch[4]);
  }
}
