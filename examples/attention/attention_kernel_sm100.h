/* attention_kernel_sm100.h - the sm_100a attention kernel with FlashAttention-4's roles (attention.h has the block's
 * structure, docs/attention.md the walkthrough and the timeline). attention_kernels.h includes this file for head_dim
 * 64 and 128 when it builds for sm_100a or for the CPU machine emulating it (attention.h: ATTN_TEXT_*), after defining
 * ATTN_KERNEL, ATTN_DT (bf16 or f16), ATTN_T (its C type) and ATTN_D.
 *
 * One block is the block of attention_kernel.h - 128 packed query rows, 384 threads, the same shared-memory plan -
 * so the host code does not depend on the arch. The roles:
 *   warp 0          the TMA warp: Q once (128 rows: 2 x head_dim/64 boxes of the 64-row map), then K_j and V_j
 *                   into the 2-stage rings (full/empty mbarriers)
 *   warp 1          the MMA warp: S_j = Q K_j^T into Tensor Memory buffer j % 3, one key block ahead of the
 *                   softmax; O += P_j V_j with P from Tensor Memory; every completion is a tcgen05.commit
 *   warpgroup 1     the softmax warpgroup, thread t = row t (M = 128): S_j with tcgen05.ld, the online softmax,
 *                   P_j written back over S_j's columns with tcgen05.st, the correction (O *= exp(m_old - m_new)
 *                   once P V of block j-1 is complete), then one arrive per warp for the MMA warp
 *   warps 2-3, warpgroup 2   idle: they give their registers to the softmax warpgroup
 * Tensor Memory (512 columns): S buffers b = 0, 1, 2 at [b BN, (b + 1) BN), O [3 BN, 3 BN + D); P_j is the first
 * BN/2 columns of S buffer j % 3 (bf16, two per 32-bit cell). The MMA warp computes S_{j+1} while the softmax works
 * on S_j (the tensor cores run under the exponentials), and S_{j+1} must not overwrite a P that a P V still reads:
 * PTX orders two MMAs of one thread only when they share the accumulator (ptx-reference 5.8), and P_{j-1} V_{j-1}
 * accumulates into O, not into S. With three buffers S_{j+1} replaces P_{j-2}, and the MMA warp waits for
 * P_{j-2} V_{j-2} to complete (its commit to pfree[(j-2) % 3]) first - an MMA issued two blocks ago, so the wait
 * rarely stalls the tensor pipe, where with two buffers it would wait for the MMA issued just before.
 */
#define ATTN__NAME2(a, b, c) a##b##_##c
#define ATTN__NAME(a, b, c) ATTN__NAME2(a, b, c)
#define ATTN_K ATTN__NAME(attn_k_, ATTN_DT, ATTN_D)
#define ATTN_V ATTN__NAME(attn_v_, ATTN_DT, ATTN_D)
#define ATTN_LAYOUT KBD_CAT(attn_layout_, ATTN_D)
#define ATTN_KB ATTN_BN(ATTN_D)
#define ATTN_OC 32   /* output columns per epilogue / correction chunk */
#define ATTN_SM 128  /* query rows of the softmax warpgroup: one M = 128 MMA, thread t = row t */
#define ATTN_QBOX 64 /* rows of the Q tensor map's box (attention_run.c: the block of attention_kernel.h) */

/* Q of the block as the MMA reads it (128 rows), and one TMA box of it (attention.h: ATTN_TILES) */
#define ATTN_Q128 ATTN__NAME(attn_q128_, ATTN_DT, ATTN_D)
#define ATTN_QB ATTN__NAME(attn_qbox_, ATTN_DT, ATTN_D)
KBD_STATIC_ASSERT(ATTN_BM(ATTN_D) == ATTN_SM && ATTN_CONSUMERS(ATTN_D) == 2,
                  "attention_kernel_sm100.h: one softmax warpgroup of 128 rows per block of attention_kernel.h");
KBD_STATIC_ASSERT(3 * ATTN_BN(ATTN_D) + ATTN_D <= ATTN_TMEM_COLS,
                  "attention_kernel_sm100.h: three S buffers and O must fit the Tensor Memory allocation");

KBD_KERNEL(ATTN_KERNEL, ATTN_THREADS(ATTN_D), attn_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  attn_smem l;
  const kbd_smem_plan plan = ATTN_LAYOUT(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *qfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.qfull);
  kbd_mbarrier *kfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kfull);
  kbd_mbarrier *kempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kempty);
  kbd_mbarrier *vfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vfull);
  kbd_mbarrier *vempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vempty);
  kbd_mbarrier *sfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.sfull);   /* S_j in buffer j % 3 is complete */
  kbd_mbarrier *pfree = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.pfree);   /* P_j V_j read buffer j % 3 */
  kbd_mbarrier *pready = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.pready); /* P_j written, O corrected */
  kbd_mbarrier *ofull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.ofull);   /* O += P_j V_j is complete */
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      kbd_mbarrier_init(qfull, 1);
      for (int s = 0; s < ATTN_STAGES; ++s) {
        kbd_mbarrier_init(&kfull[s], 1); /* the TMA warp's arrive.expect_tx */
        kbd_mbarrier_init(&vfull[s], 1);
        kbd_mbarrier_init(&kempty[s], 1); /* the MMA warp's commit */
        kbd_mbarrier_init(&vempty[s], 1);
      }
      for (int b = 0; b < 3; ++b) {
        kbd_mbarrier_init(&sfull[b], 1); /* the MMA warp's commits */
        kbd_mbarrier_init(&pfree[b], 1);
      }
      kbd_mbarrier_init(pready, KBD_ACC_RELEASES(ATTN_SM)); /* one arrive per softmax warp */
      kbd_mbarrier_init(ofull, 1);
      kbd_tma_prefetch_map(&p.k);
      kbd_tma_prefetch_map(&p.v);
    }
    kbd_tmem_alloc(tmem, ATTN_TMEM_COLS);
  }
  kbd_sync(); /* barriers initialised, Tensor Memory address written */

  if (kbd_warpgroup_id() == 0) {
    kbd_setmaxnreg_dec(56); /* 56 + 256 + 24 (x 128 threads) fit the 384 x 168 the block launches with */
    /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb1) of split kbd_block_z()
     * (computed after setmaxnreg: a value live across the register reallocation is spilled) */
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_SM;
    int kb0, kb1;
    attn_key_blocks(r0, rows - r0 < ATTN_SM ? rows - r0 : ATTN_SM, p.seq_q, p.seq_k, p.causal, ATTN_KB,
                    (int)kbd_block_z(), p.splits, &kb0, &kb1);
    const int n = kb1 - kb0;
    if (kbd_warp_id() == 0) {
      /* the TMA warp. K_j and V_j alternate in one queue: V_j's stage frees only when P_j V_j completes, K_{j+1}'s
       * when S_{j+1-STAGES} does, and the MMA warp needs them in that order */
      KBD_ELECT_ONE {
        ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, 0);
        kbd_mbarrier_arrive_expect_tx(qfull, KBD_STILE_BYTES(q));
        for (int c = 0; c < ATTN_D / 64; ++c)
          for (int h = 0; h < ATTN_SM / ATTN_QBOX; ++h) {
            ATTN_QB box = KBD_SMEM_PLAN_STILE(ATTN_QB, smem, l.q + (size_t)(ATTN_SM * c + ATTN_QBOX * h) * 128u, 0);
            kbd_tma_load(box, &p.q, qfull, 64 * c, r0 + ATTN_QBOX * h, bh); /* past the head's end: zeros */
          }
      }
      for (int it = 0; it < n; ++it) {
        const int s = it % ATTN_STAGES, kb = kb0 + it;
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
    } else if (kbd_warp_id() == 1) {
      /* the MMA warp: one elected thread issues and commits everything (tcgen05.commit tracks its own MMAs).
       * Tensor Memory views, bound after setmaxnreg (values live across the register reallocation are spilled):
       * S_j in buffer j % 3, P_j over its columns, O. The views are re-bound per block: an array of them indexed
       * by j % 3 would be local memory */
      KBD_ACC(f32, ATTN_SM, ATTN_KB) sj;
      KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
      KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pj;
      kbd_acc_bind(oacc, tmem, 3 * ATTN_KB, ofull);
      ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, 0);
      kbd_mbarrier_wait(qfull, 0);
      if (n > 0) {
        ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, 0);
        kbd_mbarrier_wait(&kfull[0], 0);
        kbd_acc_bind(sj, tmem, 0, &sfull[0]);
        kbd_mma_issue(sj, q, k, 0);
        kbd_mma_commit(sj, &sfull[0]);
        kbd_mma_commit(sj, &kempty[0]);
      }
      for (int it = 0; it < n; ++it) {
        /* S_{j+1} into buffer (j+1) % 3. The softmax read its S_{j-2} before P_{j-2} was ready, and P_{j-2} V_{j-2}
         * must have read P_{j-2}: a different accumulator, so only its completion orders it (file comment) */
        if (it + 1 < n) {
          const int sn = (it + 1) % ATTN_STAGES, b = (it + 1) % 3;
          ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, sn);
          kbd_acc_bind(sj, tmem, b * ATTN_KB, &sfull[b]);
          if (it >= 2) kbd_acc_wait(sj, &pfree[b], (unsigned)((it - 2) / 3) & 1u);
          kbd_mbarrier_wait(&kfull[sn], (unsigned)((it + 1) / ATTN_STAGES) & 1u);
          kbd_mma_issue(sj, q, k, 0);
          kbd_mma_commit(sj, &sfull[b]);
          kbd_mma_commit(sj, &kempty[sn]);
        }
        /* O += P_j V_j once the softmax has written P_j and corrected O (kbd_acc_wait fences after the wait) */
        const int sp = it % ATTN_STAGES, b = it % 3;
        ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, sp);
        kbd_acc_wait(oacc, pready, (unsigned)it & 1u);
        kbd_mbarrier_wait(&vfull[sp], (unsigned)(it / ATTN_STAGES) & 1u);
        kbd_tmem_a_bind(pj, tmem, b * ATTN_KB);
        kbd_mma_ts_issue(oacc, pj, v, it > 0);
        kbd_mma_commit(oacc, ofull);
        kbd_mma_commit(oacc, &pfree[b]); /* S_{j+3} may replace P_j once this completes */
        kbd_mma_commit(oacc, &vempty[sp]);
      }
    }
  } else if (kbd_warpgroup_id() == 1) {
    kbd_setmaxnreg_inc(256);
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_SM;
    const int mrows = rows - r0 < ATTN_SM ? rows - r0 : ATTN_SM;
    int kb0, kb1;
    attn_key_blocks(r0, mrows, p.seq_q, p.seq_k, p.causal, ATTN_KB, (int)kbd_block_z(), p.splits, &kb0, &kb1);
    const int n = kb1 - kb0;
    KBD_ACC(f32, ATTN_SM, ATTN_KB) sj;
    KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
    KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pj;
    kbd_acc_bind(oacc, tmem, 3 * ATTN_KB, ofull);
    KBD_ACC_TILE(f32, ATTN_SM, ATTN_KB) sc; /* S_j of this thread's row, then P_j in f32 */
    KBD_SOFTMAX_STATE(sc) st;
    kbd_softmax_init(st);
    for (int it = 0; it < n; ++it) {
      const int b = it % 3, k0 = (kb0 + it) * ATTN_KB;
      kbd_acc_bind(sj, tmem, b * ATTN_KB, &sfull[b]);
      kbd_tmem_a_bind(pj, tmem, b * ATTN_KB);
      kbd_acc_wait(sj, &sfull[b], (unsigned)(it / 3) & 1u);
      kbd_acc_load(sc, sj, 0);
      /* mask by position only where a block crosses the end of the keys or the causal diagonal */
      if (attn_block_masked(r0, mrows, k0, ATTN_KB, p.seq_q, p.seq_k, p.causal))
        KBD_MAP(sc, sc, x, r, c, c < attn_visible_cols(r0 + r, k0, p.seq_q, p.seq_k, p.causal) ? x : -INFINITY);
      kbd_softmax_update(sc, st, sc, p.scale);
      /* P_j over S_j's columns: S_j is in registers now, and P_{j-3} V_{j-3}, the last MMA to read these columns,
       * completed before the correction of block j-1 went on (that waited for P_{j-2} V_{j-2}). The store rounds P to
       * the input type while it packs the pairs (no 16-bit copy of P in registers), and comes first so that P's
       * registers are free before the correction needs some */
      kbd_tmem_a_store(pj, sc, 0);
      /* the correction: O holds the blocks before j at the old maximum. P_{j-1} V_{j-1} must be complete first
       * (it accumulates into O), and the MMA warp issues P_j V_j only after the arrive below, so O is ours now */
      if (it > 0) {
        kbd_acc_wait(oacc, ofull, (unsigned)(it - 1) & 1u);
        KBD_ACC_UNROLL
        for (int c = 0; c < ATTN_D; c += ATTN_OC) {
          KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
          kbd_acc_load(o, oacc, c);
          kbd_softmax_rescale(o, st);
          kbd_acc_store(oacc, o, c);
        }
      }
      /* one arrive per warp: wait::st and fence::before_thread_sync order P_j's stores and the correction's
       * before the MMA warp's P_j V_j */
      kbd_tmem_a_ready(pj, pready);
    }
    if (n > 0) {
      kbd_acc_wait(oacc, ofull, (unsigned)(n - 1) & 1u);
    } else {
      /* no key block (causal rows before the first key, or an empty split): O = 0, lse = -inf below */
      KBD_ACC_UNROLL
      for (int c = 0; c < ATTN_D; c += ATTN_OC) {
        KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
        kbd_zero(o);
        kbd_acc_store(oacc, o, c);
      }
    }

    /* O / sum and the log-sum-exp, chunk by chunk; rows past the end of the packed rows are not stored. A row
     * that saw no key has sum 0: O = 0, lse = -inf. */
    const long long head0 = (long long)bh * rows; /* first packed row of this (batch, kv head) */
    const long long part = (long long)kbd_block_z() * kbd_grid_y() * rows + head0; /* splits > 1 */
    KBD_ROWVEC(f32, sc) lse;
    KBD_NO_UNROLL
    for (int c = 0; c < ATTN_D; c += ATTN_OC) {
      KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
      kbd_acc_load(o, oacc, c);
      kbd_softmax_finish(o, lse, st, p.scale);
      if (p.splits == 1) {
        KBD_ACC_TILE(ATTN_DT, ATTN_SM, ATTN_OC) ob;
        kbd_convert(ob, o);
        kbd_store2d((ATTN_T *)p.o + head0 * ATTN_D, ob, rows, ATTN_D, ATTN_D, r0, c);
      } else {
        kbd_store2d(p.o_part + part * ATTN_D, o, rows, ATTN_D, ATTN_D, r0, c);
      }
    }
    if (p.splits == 1 && p.lse) kbd_vec_store_n(p.lse + head0 + r0, lse, rows - r0);
    if (p.splits > 1) kbd_vec_store_n(p.lse_part + part + r0, lse, rows - r0);
  } else {
    kbd_setmaxnreg_dec(24); /* warpgroup 2 has no role: its registers go to the softmax warpgroup */
  }
  kbd_sync(); /* every Tensor Memory read is done before the columns are freed */
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, ATTN_TMEM_COLS);
#endif
}

#undef ATTN_K
#undef ATTN_V
#undef ATTN_LAYOUT
#undef ATTN_KB
#undef ATTN_OC
#undef ATTN_SM
#undef ATTN_QBOX
#undef ATTN_Q128
#undef ATTN_QB
#undef ATTN__NAME
#undef ATTN__NAME2
