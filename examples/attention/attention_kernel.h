/* attention_kernel.h - the attention kernel (attention.h has the block's structure, docs/attention.md the
 * walkthrough). attention.cu includes this file once per (type, head_dim) after defining
 *   ATTN_KERNEL  the kernel's name      ATTN_DT  bf16 or f16      ATTN_T  its C type      ATTN_D  64, 128 or 256
 * Everything else is ordinary code: the same text is the sm_90a, the sm_100a and the CPU kernel.
 */
/* the shared tile types and the shared-memory plan of this (type, head_dim): attention.h declares them */
#define ATTN__NAME2(a, b, c) a##b##_##c
#define ATTN__NAME(a, b, c) ATTN__NAME2(a, b, c)
#define ATTN_Q ATTN__NAME(attn_q_, ATTN_DT, ATTN_D)
#define ATTN_K ATTN__NAME(attn_k_, ATTN_DT, ATTN_D)
#define ATTN_V ATTN__NAME(attn_v_, ATTN_DT, ATTN_D)
#define ATTN_P ATTN__NAME(attn_p_, ATTN_DT, ATTN_D)
#define ATTN_LAYOUT KBD_CAT(attn_layout_, ATTN_D)
#define ATTN_NC ATTN_CONSUMERS(ATTN_D)
#define ATTN_KB ATTN_BN(ATTN_D)
#define ATTN_OC 32 /* output columns per epilogue / rescale chunk */

KBD_KERNEL(ATTN_KERNEL, ATTN_THREADS(ATTN_D), attn_params) {
  KBD_WARP_RANGE(producer, 0, 4);
  KBD_WARP_RANGE(consumer0, 4, 4);
  KBD_WARP_RANGE(consumer1, 4 * ATTN_NC, 4); /* with one consumer: the same warps as consumer0, unused */

  attn_smem l;
  const kbd_smem_plan plan = ATTN_LAYOUT(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *qfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.qfull);
  kbd_mbarrier *kfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kfull);
  kbd_mbarrier *kempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kempty);
  kbd_mbarrier *vfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vfull);
  kbd_mbarrier *vempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vempty);
  kbd_mbarrier *sdone = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.sdone);
  kbd_mbarrier *odone = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.odone);
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(qfull, 1);
      for (int s = 0; s < ATTN_STAGES; ++s) {
        kbd_mbarrier_init(&kfull[s], 1); /* the producer's arrive.expect_tx */
        kbd_mbarrier_init(&vfull[s], 1);
        kbd_mbarrier_init(&kempty[s], ATTN_NC); /* one release per consumer warpgroup */
        kbd_mbarrier_init(&vempty[s], ATTN_NC);
      }
      for (int g = 0; g < ATTN_NC; ++g) {
        kbd_mbarrier_init(&sdone[g], 1); /* kbd_mma_wait's commit (sm_100a) */
        kbd_mbarrier_init(&odone[g], 1);
      }
      kbd_tma_prefetch_map(&p.k);
      kbd_tma_prefetch_map(&p.v);
    }
    kbd_tmem_alloc(tmem, ATTN_TMEM_COLS); /* sm_100a: S and O of each consumer; nothing on sm_90a */
  }
  kbd_sync(); /* barriers initialised, Tensor Memory address written */

  if (kbd_scope_contains(producer)) {
    if (ATTN_NC == 2) kbd_setmaxnreg_dec(40); /* 40 x 128 + 232 x 256 = 168 x 384, the launch budget */
    /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb1) of split kbd_block_z()
     * (computed after setmaxnreg in each branch: a value live across the register reallocation is spilled) */
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_BM(ATTN_D);
    int kb0, kb1;
    attn_key_blocks(r0, rows - r0 < ATTN_BM(ATTN_D) ? rows - r0 : ATTN_BM(ATTN_D), p.seq_q, p.seq_k, p.causal, ATTN_KB,
                    (int)kbd_block_z(), p.splits, &kb0, &kb1);
    if (kbd_warp_id() == 0) {
      KBD_ELECT_ONE {
        ATTN_Q q0 = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, 0);
        kbd_mbarrier_arrive_expect_tx(qfull, ATTN_NC * KBD_STILE_BYTES(q0));
        for (int g = 0; g < ATTN_NC; ++g) {
          ATTN_Q q = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, g);
          kbd_tma_load(q, &p.q, qfull, 0, r0 + g * ATTN_WM, bh); /* rows past the head's end load as zeros */
        }
      }
      for (int kb = kb0; kb < kb1; ++kb) {
        const int it = kb - kb0, s = it % ATTN_STAGES;
        const unsigned free_parity = ((unsigned)(it / ATTN_STAGES) & 1u) ^ 1u; /* a fresh barrier counts as freed */
        ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, s);
        ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, s);
        kbd_mbarrier_wait(&kempty[s], free_parity);
        KBD_ELECT_ONE {
          kbd_mbarrier_arrive_expect_tx(&kfull[s], KBD_STILE_BYTES(k));
          kbd_tma_load(k, &p.k, &kfull[s], 0, kb * ATTN_KB, bh);
        }
        kbd_mbarrier_wait(&vempty[s], free_parity);
        KBD_ELECT_ONE {
          kbd_mbarrier_arrive_expect_tx(&vfull[s], KBD_STILE_BYTES(v));
          kbd_tma_load(v, &p.v, &vfull[s], 0, kb * ATTN_KB, bh);
        }
      }
    }
  } else {
    if (ATTN_NC == 2) kbd_setmaxnreg_inc(232);
    /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb1) of split kbd_block_z()
     * (computed after setmaxnreg in each branch: a value live across the register reallocation is spilled) */
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_BM(ATTN_D);
    int kb0, kb1;
    attn_key_blocks(r0, rows - r0 < ATTN_BM(ATTN_D) ? rows - r0 : ATTN_BM(ATTN_D), p.seq_q, p.seq_k, p.causal, ATTN_KB,
                    (int)kbd_block_z(), p.splits, &kb0, &kb1);
    const int g = kbd_warpgroup_id() - 1;
    const kbd_scope me = g == 0 ? consumer0 : consumer1;
    const int mr0 = r0 + g * ATTN_WM; /* this warpgroup's first packed row */
    const int mrows = rows - mr0 < 1 ? 1 : rows - mr0 < ATTN_WM ? rows - mr0 : ATTN_WM;
    ATTN_Q q = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, g);
    KBD_ACC(f32, ATTN_WM, ATTN_KB) sacc;
    KBD_ACC(f32, ATTN_WM, ATTN_D) oacc;
    kbd_acc_bind(sacc, tmem, g * (ATTN_KB + ATTN_D), &sdone[g]);
    kbd_acc_bind(oacc, tmem, g * (ATTN_KB + ATTN_D) + ATTN_KB, &odone[g]);
    KBD_ACC_TILE(f32, ATTN_WM, ATTN_KB) sc; /* scores, then probabilities */
    KBD_SOFTMAX_STATE(sc) st;
    kbd_softmax_init(st);
    /* O starts at zero, so every block rescales it and accumulates into it: no branch touches the accumulator
     * (on sm_90a a branch that writes wgmma accumulator registers makes ptxas serialize the wgmmas, C7518) */
    KBD_ACC_UNROLL
    for (int c = 0; c < ATTN_D; c += ATTN_OC) {
      KBD_ACC_TILE(f32, ATTN_WM, ATTN_OC) o;
      kbd_zero(o);
      kbd_acc_store(oacc, o, c);
    }

    kbd_mbarrier_wait(qfull, 0);
    for (int kb = kb0; kb < kb1; ++kb) {
      const int it = kb - kb0, s = it % ATTN_STAGES;
      const unsigned full_parity = (unsigned)(it / ATTN_STAGES) & 1u;
      ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, s);
      ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, s);
      ATTN_P pt = KBD_SMEM_PLAN_STILE(ATTN_P, smem, l.pt, 2 * g + (it & 1));

      /* the previous block's O += P V completes first (nothing at the first block): on sm_90a a wgmma group
       * still in flight when the S wgmmas issue makes ptxas serialize every wgmma of the kernel (C7514) */
      kbd_mma_wait(oacc);

      /* S = Q K^T; the K stage is released as soon as the MMA has read it */
      kbd_mbarrier_wait(&kfull[s], full_parity);
      kbd_mma(sacc, q, k, 0);
      kbd_mma_release(sacc, &kempty[s]);
      kbd_mma_wait(sacc);
      kbd_acc_load(sc, sacc, 0);

      /* mask by position only where a block crosses the end of the keys or the causal diagonal */
      const int k0 = kb * ATTN_KB;
      if (attn_block_masked(mr0, mrows, k0, ATTN_KB, p.seq_q, p.seq_k, p.causal)) {
        const int shift = p.seq_k - p.seq_q;
        KBD_MAP(sc, sc, x, r, c,
                k0 + c < p.seq_k && (!p.causal || k0 + c <= (mr0 + r) % p.seq_q + shift) ? x : -INFINITY);
      }

      /* online softmax: sc becomes P = exp(scale (S - m)); O, which holds the earlier blocks, moves to the new
       * max. The P tile written here was last read by the MMA two blocks ago: complete, and every warp of the
       * warpgroup has passed a barrier since. */
      kbd_softmax_update(sc, st, sc, p.scale);
      /* in chunks of columns: on sm_90a the chunk is registers of the accumulator itself (constant indices:
       * KBD_ACC_UNROLL unrolls there), on sm_100a a tcgen05.ld / st round trip of ATTN_OC columns (rolled) */
      KBD_ACC_UNROLL
      for (int c = 0; c < ATTN_D; c += ATTN_OC) {
        KBD_ACC_TILE(f32, ATTN_WM, ATTN_OC) o;
        kbd_acc_load(o, oacc, c);
        kbd_softmax_rescale(o, st);
        kbd_acc_store(oacc, o, c);
      }
      KBD_ACC_TILE(ATTN_DT, ATTN_WM, ATTN_KB) pr;
      kbd_convert(pr, sc);
      kbd_stile_store(pt, pr);
      kbd_fence_proxy_async(); /* generic stores of P -> the MMA's async-proxy reads */
      /* every warp waits for V before the barrier: on sm_100a only the leader issues the MMA and releases the
       * stage, so a warp that waited after the barrier could find the producer already two phases further on
       * this barrier and wait forever for a parity that has come and gone */
      kbd_mbarrier_wait(&vfull[s], full_parity);
      kbd_scope_sync(me);

      /* O += P V */
      kbd_mma(oacc, pt, v, 1);
      kbd_mma_release(oacc, &vempty[s]);
    }
    kbd_mma_wait(oacc);

    /* O / sum and the log-sum-exp, chunk by chunk; rows past the end of the packed rows are not stored. A row
     * that saw no key (or a split with no key block) has sum 0: O = 0, lse = -inf. */
    const long long head0 = (long long)bh * rows; /* first packed row of this (batch, kv head) */
    const long long part = (long long)kbd_block_z() * kbd_grid_y() * rows + head0; /* splits > 1 */
    KBD_ROWVEC(f32, sc) lse;
    /* rolled: the body is compiled once (sm_90a: kbd_acc_load branches to the registers of chunk c) */
    KBD_NO_UNROLL
    for (int c = 0; c < ATTN_D; c += ATTN_OC) {
      KBD_ACC_TILE(f32, ATTN_WM, ATTN_OC) o;
      kbd_acc_load(o, oacc, c);
      kbd_softmax_finish(o, lse, st, p.scale);
      if (p.splits == 1) {
        KBD_ACC_TILE(ATTN_DT, ATTN_WM, ATTN_OC) ob;
        kbd_convert(ob, o);
        kbd_store2d((ATTN_T *)p.o + head0 * ATTN_D, ob, rows, ATTN_D, ATTN_D, mr0, c);
      } else {
        kbd_store2d(p.o_part + part * ATTN_D, o, rows, ATTN_D, ATTN_D, mr0, c);
      }
    }
    if (p.splits == 1 && p.lse) kbd_vec_store_n(p.lse + head0 + mr0, lse, rows - mr0);
    if (p.splits > 1) kbd_vec_store_n(p.lse_part + part + mr0, lse, rows - mr0);
  }
  kbd_sync(); /* every Tensor Memory read is done before the columns are freed */
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, ATTN_TMEM_COLS);
}

#undef ATTN_NC
#undef ATTN_Q
#undef ATTN_K
#undef ATTN_V
#undef ATTN_P
#undef ATTN_LAYOUT
#undef ATTN__NAME
#undef ATTN__NAME2
#undef ATTN_KB
#undef ATTN_OC
