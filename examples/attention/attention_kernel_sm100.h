/* attention_kernel_sm100.h - the sm_100a attention kernel with FlashAttention-4's structure (attention.h has the
 * block, docs/attention.md the walkthrough and the timeline). attention_kernels.h includes this file for head_dim 64
 * and 128 when it builds for sm_100a or for the CPU machine emulating it (attention.h: ATTN_TEXT_*), after defining
 * ATTN_KERNEL, ATTN_DT (bf16 or f16), ATTN_T (its C type) and ATTN_D.
 *
 * A block owns 256 packed query rows as two Q tiles of 128 (ATTN_FA4_BM; the host asks attn_block_rows), 512 threads:
 *   warp 0          the TMA warp: Q tile 0 and Q tile 1 (2 x head_dim/64 boxes of the 64-row map each), then K_j
 *                   and V_j into the 2-stage rings (full/empty mbarriers)
 *   warp 1          the MMA warp: for each key block j and tile t, O_t += P_t,j V_j, then S_t,j+1 = Q_t K_j+1^T:
 *                   while the tensor cores work for one tile, the other tile's softmax runs (the ping-pong)
 *   warpgroup 1+t   the softmax of tile t, thread i = row i (M = 128): S_t,j with tcgen05.ld, the online softmax,
 *                   P_t,j written back over S_t,j's first columns and the row factors exp(m_old - m_new) beside it
 *                   (tcgen05.st), one arrive per warp; at the end O_t / sum and the log-sum-exp
 *   warpgroup 3     the correction: for each tile, once P_t,j-1 V_j-1 is complete, O_t *= the row factors of block
 *                   j (a tcgen05.ld / FMUL / tcgen05.st round trip the softmax does not wait for), one arrive per warp
 *   warps 2-3       no role (their registers go to the softmax warpgroups)
 * Each tile takes its own key blocks (attention.h: attn_fa4_range; the TMA warp loads the longer range), and a block
 * whose second tile has no row (rows - r0 <= 128: decode, short sequences) runs tile 0 only.
 *
 * Tensor Memory (512 columns): S_t at [t BN, (t + 1) BN), O_t at [2 BN + t D, 2 BN + (t + 1) D). P_t,j takes the first
 * BN/2 columns of S_t (bf16, two per 32-bit cell), the row factors the 8 columns after them. S_t,j+1 overwrites
 * P_t,j, which P_t,j V_j reads as A: PTX orders two MMAs of one thread only when they share the accumulator
 * (ptx-reference 5.8), and P_t,j V_j accumulates into O_t, so the MMA warp waits for P_t,j V_j's completion before
 * issuing S_t,j+1. FA4 issues S_t,j+1 right behind it; here the tensor pipe keeps the other tile's MMA queued
 * across that wait.
 */
#include "attention_store_o.h" /* attn_fa4_store_o: the epilogue's TMA store of O */

#define ATTN__NAME2(a, b, c) a##b##_##c
#define ATTN__NAME(a, b, c) ATTN__NAME2(a, b, c)
#define ATTN_K ATTN__NAME(attn_k_, ATTN_DT, ATTN_D)
#define ATTN_V ATTN__NAME(attn_v_, ATTN_DT, ATTN_D)
#define ATTN_LAYOUT KBD_CAT(attn_layout_fa4_, ATTN_D)
#define ATTN_KB ATTN_BN(ATTN_D)
#define ATTN_OC 32             /* output columns per epilogue / correction chunk */
#define ATTN_SM ATTN_FA4_TM    /* rows of a Q tile: one M = 128 MMA, thread i of a softmax or correction WG = row i */
#define ATTN_QBOX ATTN_WM      /* rows of the Q tensor map's box (attention_run.c) */
#define ATTN_FAC (ATTN_KB / 2) /* S_t's column of the row factors: the first after P */
/* FA4's exponential (docs/attention.md, "FA4's exponential on sm_100a"): of each 8 elements of a row, the last
 * ATTN_POLY take 2^x by a polynomial on the FMA pipe (kbd/exp2_poly.h), the rest MUFU.EX2. MUFU.EX2 does 4 lanes per
 * clock per scheduler, 8 cycles per warp instruction: all 129 of a block took 1032 cycles, more than the tile's S and
 * P V (1024) at head_dim 128. 2 of 8 leaves 97 (776 cycles, 76%) for ~200 more issue slots, which the packed f32x2
 * exponents and row sums partly pay back; at head_dim 64 the same split balances MUFU and issue time */
#define ATTN_POLY 2

/* Q of one tile as the MMA reads it (128 rows), and one TMA box of it (attention.h: ATTN_TILES) */
#define ATTN_Q128 ATTN__NAME(attn_q128_, ATTN_DT, ATTN_D)
#define ATTN_QB ATTN__NAME(attn_qbox_, ATTN_DT, ATTN_D)
KBD_STATIC_ASSERT(2 * ATTN_BN(ATTN_D) + 2 * ATTN_D <= ATTN_TMEM_COLS,
                  "attention_kernel_sm100.h: S and O of both Q tiles must fit the Tensor Memory allocation");

KBD_KERNEL(ATTN_KERNEL, ATTN_FA4_THREADS, attn_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  /* the softmax warpgroups, each on its own: the epilogue's staging of O */
  KBD_WARP_RANGE(softmax0, 4, 4);
  KBD_WARP_RANGE(softmax1, 8, 4);
  attn_smem l;
  const kbd_smem_plan plan = ATTN_LAYOUT(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *qfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.qfull); /* per tile */
  kbd_mbarrier *kfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kfull);
  kbd_mbarrier *kempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kempty);
  kbd_mbarrier *vfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vfull);
  kbd_mbarrier *vempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vempty);
  kbd_mbarrier *sfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.sfull);   /* per tile: S_t,j is complete */
  kbd_mbarrier *pready = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.pready); /* P_t,j and its row factors written */
  kbd_mbarrier *ocorr = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.ocorr);   /* O_t rescaled for block j */
  kbd_mbarrier *ofull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.ofull);   /* O_t += P_t,j V_j is complete */
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < ATTN_STAGES; ++s) {
        kbd_mbarrier_init(&kfull[s], 1); /* the TMA warp's arrive.expect_tx */
        kbd_mbarrier_init(&vfull[s], 1);
        kbd_mbarrier_init(&kempty[s], 1); /* the MMA warp's commit */
        kbd_mbarrier_init(&vempty[s], 1);
      }
      for (int t = 0; t < 2; ++t) {
        kbd_mbarrier_init(&qfull[t], 1);
        kbd_mbarrier_init(&sfull[t], 1); /* the MMA warp's commits */
        kbd_mbarrier_init(&ofull[t], 1);
        kbd_mbarrier_init(&pready[t], KBD_ACC_RELEASES(ATTN_SM)); /* one arrive per softmax warp */
        kbd_mbarrier_init(&ocorr[t], KBD_ACC_RELEASES(ATTN_SM));  /* one arrive per correction warp */
      }
      kbd_tma_prefetch_map(&p.k);
      kbd_tma_prefetch_map(&p.v);
    }
    kbd_tmem_alloc(tmem, ATTN_TMEM_COLS);
  }
  kbd_sync(); /* barriers initialised, Tensor Memory address written */

  /* Every role computes its block's range (attention.h: attn_fa4_range) after its setmaxnreg: a value live across the
   * register reallocation is spilled. */
  if (kbd_warpgroup_id() == 0) {
    kbd_setmaxnreg_dec(ATTN_FA4_REGS_LOAD);
    const attn_range br = attn_fa4_range(&p, ATTN_KB, (int)kbd_block_x(), (int)kbd_block_z());
    const int r0 = br.r0, kb0 = br.kb0, n = br.n, bh = (int)kbd_block_y();
    const int n0 = br.nt[0], n1 = br.nt[1]; /* per tile, named: br.nt[t] with a run-time t would be local memory */
    if (kbd_warp_id() == 0) {
      /* the TMA warp. K_j and V_j alternate in one queue: V_j's stage frees only when P V of block j completes for
       * both tiles, K_{j+1}'s when S of block j+1-STAGES does, and the MMA warp needs them in that order */
      KBD_ELECT_ONE { /* Q only for a tile with key blocks: nothing waits for it otherwise */
        for (int t = 0; t < 2; ++t) {
          if ((t ? n1 : n0) == 0) continue;
          ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, t);
          kbd_mbarrier_arrive_expect_tx(&qfull[t], KBD_STILE_BYTES(q));
          for (int c = 0; c < ATTN_D / 64; ++c)
            for (int h = 0; h < ATTN_SM / ATTN_QBOX; ++h) {
              const size_t at = l.q + (size_t)t * KBD_STILE_BYTES(q) + (size_t)(ATTN_SM * c + ATTN_QBOX * h) * 128u;
              ATTN_QB box = KBD_SMEM_PLAN_STILE(ATTN_QB, smem, at, 0);
              kbd_tma_load3d(box, &p.q, &qfull[t], bh, r0 + ATTN_SM * t + ATTN_QBOX * h, 64 * c); /* past the end: 0 */
            }
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
          kbd_tma_load3d(k, &p.k, &kfull[s], bh, kb * ATTN_KB, 0);
        }
        kbd_mbarrier_wait(&vempty[s], free_parity);
        KBD_ELECT_ONE {
          kbd_mbarrier_arrive_expect_tx(&vfull[s], KBD_STILE_BYTES(v));
          kbd_tma_load3d(v, &p.v, &vfull[s], bh, kb * ATTN_KB, 0);
        }
      }
    } else if (kbd_warp_id() == 1) {
      /* the MMA warp: one elected thread issues and commits everything (tcgen05.commit tracks its own MMAs). The
       * Tensor Memory views are re-bound per tile: an array of views indexed by t would be local memory */
      KBD_ACC(f32, ATTN_SM, ATTN_KB) s;
      KBD_ACC(f32, ATTN_SM, ATTN_D) o;
      KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pt;
      if (n > 0) {
        ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, 0);
        kbd_mbarrier_wait(&kfull[0], 0);
        for (int t = 0; t < 2; ++t) {
          if ((t ? n1 : n0) == 0) continue;
          ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, t);
          kbd_acc_bind(s, tmem, t * ATTN_KB, &sfull[t]);
          kbd_mbarrier_wait(&qfull[t], 0);
          kbd_mma_issue(s, q, k, 0);
          kbd_mma_commit(s, &sfull[t]);
        }
        kbd_mma_commit(s, &kempty[0]);
      }
      /* the key loop is one elected section (docs/attention.md): its thread waits, issues and commits */
      KBD_ELECT_ONE {
        for (int it = 0; it < n; ++it) {
          const int sp = it % ATTN_STAGES, sn = (it + 1) % ATTN_STAGES, more = it + 1 < n;
          const unsigned par = (unsigned)it & 1u;
          ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, sp);
          ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, sn);
          kbd_mbarrier_wait(&vfull[sp], (unsigned)(it / ATTN_STAGES) & 1u);
          if (more) kbd_mbarrier_wait(&kfull[sn], (unsigned)((it + 1) / ATTN_STAGES) & 1u);
          for (int t = 0; t < 2; ++t) {
            if (it >= (t ? n1 : n0)) continue; /* this tile's last key block is behind it */
            /* O_t += P_t,j V_j once the correction brought O_t to block j's maximum: it arrives on "O corrected" after
             * waiting for "P ready", so that one wait also orders the softmax's P stores before the MMA (kbd_acc_wait
             * fences after it) */
            ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, t);
            kbd_acc_bind(o, tmem, 2 * ATTN_KB + t * ATTN_D, &ofull[t]);
            kbd_tmem_a_bind(pt, tmem, t * ATTN_KB);
            kbd_acc_wait(o, &ocorr[t], par);
            kbd_mma_ts_issue_elected(o, pt, v, it > 0);
            kbd_mma_commit_elected(o, &ofull[t]);
            if (it + 1 < (t ? n1 : n0)) {
              /* S_t,j+1 over P_t,j: only once P_t,j V_j has read it (file comment) */
              kbd_acc_bind(s, tmem, t * ATTN_KB, &sfull[t]);
              kbd_acc_wait(s, &ofull[t], par);
              kbd_mma_issue_elected(s, q, k, 0);
              kbd_mma_commit_elected(s, &sfull[t]);
            }
          }
          kbd_mma_commit_elected(o, &vempty[sp]);
          if (more) kbd_mma_commit_elected(o, &kempty[sn]);
        }
      }
    }
  } else if (kbd_warpgroup_id() <= 2) {
    kbd_setmaxnreg_inc(ATTN_FA4_REGS_SOFTMAX);
    const attn_range br = attn_fa4_range(&p, ATTN_KB, (int)kbd_block_x(), (int)kbd_block_z());
    const int rows = br.rows, kb0 = br.kb0, bh = (int)kbd_block_y();
    const int t = (int)kbd_warpgroup_id() - 1, rt = br.r0 + ATTN_SM * t;
    if (t < br.tiles) {
      const int n = t ? br.nt[1] : br.nt[0];
      const int mrows = rows - rt < ATTN_SM ? rows - rt : ATTN_SM;
      KBD_ACC(f32, ATTN_SM, ATTN_KB) s;
      KBD_ACC(f32, ATTN_SM, 8) fac;
      KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
      KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pt;
      kbd_acc_bind(s, tmem, t * ATTN_KB, &sfull[t]);
      kbd_acc_bind(fac, tmem, t * ATTN_KB + ATTN_FAC, &pready[t]);
      kbd_acc_bind(oacc, tmem, 2 * ATTN_KB + t * ATTN_D, &ofull[t]);
      kbd_tmem_a_bind(pt, tmem, t * ATTN_KB);
      KBD_ACC_TILE(f32, ATTN_SM, ATTN_KB) sc; /* S_t,j of this thread's row, then P_t,j in f32 */
      KBD_SOFTMAX_STATE(sc) st;
      kbd_softmax_init(st);
      for (int it = 0, k0 = kb0 * ATTN_KB; it < n; ++it, k0 += ATTN_KB) {
        kbd_acc_wait(s, &sfull[t], (unsigned)it & 1u);
        kbd_acc_load(sc, s, 0);
        /* mask by position only where a block crosses the end of the keys or the causal diagonal */
        if (attn_block_masked(rt, mrows, k0, ATTN_KB, p.seq_q, p.seq_k, p.causal))
          KBD_MAP(sc, sc, x, r, c, c < attn_visible_cols(rt + r, k0, p.seq_q, p.seq_k, p.causal) ? x : -INFINITY);
        /* lazy (FA4): a row keeps its max until a block's max exceeds it by 2^8 in P, so the factor is exactly 1
         * for most rows after the first blocks and the correction skips their O; ATTN_POLY of each 8 exponentials on
         * the FMA pipe, the exponents two per FFMA2 */
        kbd_softmax_update_lazy_poly(sc, st, sc, p.scale, KBD_SOFTMAX_SLACK, ATTN_POLY);
        /* P_t,j over S_t,j's columns (S is in registers now; P_t,j-1 V_j-1 read them before S_t,j was issued). The
         * store rounds P to the input type while it packs the pairs: no 16-bit copy of P in registers */
        kbd_tmem_a_store(pt, sc, 0);
        /* the correction warpgroup's factors, exp(scale (m_old - m_new)) of each row, in the 8 columns after P */
        KBD_ACC_TILE(f32, ATTN_SM, 8) f;
        kbd_fill(f, 1.0f);
        kbd_softmax_rescale_packed(f, st); /* every column of row r: the row's factor */
        kbd_acc_store_async(fac, f, 0);    /* no warpgroup barrier: the arrive below hands it on */
        /* one arrive per warp: wait::st and fence::before_thread_sync order P's and the factors' stores before the
         * MMA warp's P V and the correction's load */
        kbd_tmem_a_ready(pt, &pready[t]);
      }
      if (n > 0) {
        kbd_acc_wait(oacc, &ofull[t], (unsigned)(n - 1) & 1u);
      } else {
        /* no key block (causal rows before the first key, or an empty split): O = 0, lse = -inf below */
        KBD_ACC_UNROLL
        for (int c = 0; c < ATTN_D; c += ATTN_OC) {
          KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
          kbd_zero(o);
          kbd_acc_store(oacc, o, c);
        }
      }

      /* O / sum and the log-sum-exp, chunk by chunk. A row that saw no key has sum 0: O = 0, lse = -inf.
       * splits == 1: O in the input type goes out through the TMA, staged in this tile's Q (attention_kernel.h has the
       * why). Q is dead here: only S = Q K^T reads it, and the wait above acquired the MMA warp's tcgen05.commit after
       * the tile's last P V, which tracks every earlier tcgen05.mma of that thread, its last S among them (a tile
       * without key blocks never loaded Q). Each thread writes its row's chunk (16-byte st.shared, TMEM_ACC), fences it
       * for the async proxy, and attn_fa4_store_o (attention_store_o.h) has one elected thread store the tile's 64 x 64
       * boxes (the box of o's map, as of q's) that start before the end of the packed rows; the map's extent clips the
       * rest of the last one. splits > 1: the f32 partials keep their masked generic stores (attention_kernel.h). */
      const long long head0 = (long long)bh * rows; /* first packed row of this (batch, kv head) */
      const long long part = (long long)kbd_block_z() * kbd_grid_y() * rows + head0; /* splits > 1 */
      const kbd_scope me = t == 0 ? softmax0 : softmax1;
      ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, t);
      KBD_ROWVEC(f32, sc) lse;
      KBD_NO_UNROLL
      for (int c = 0; c < ATTN_D; c += ATTN_OC) {
        KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
        kbd_acc_load(o, oacc, c);
        kbd_softmax_finish(o, lse, st, p.scale);
        if (p.splits == 1) {
          KBD_ACC_TILE(ATTN_DT, ATTN_SM, ATTN_OC) ob;
          kbd_convert(ob, o);
          kbd_stile_store_at(q, ob, 0, c);
        } else {
          kbd_store2d(p.o_part + part * ATTN_D, o, rows, ATTN_D, ATTN_D, rt, c);
        }
      }
      if (p.splits == 1) {
        attn_fa4_store_o(&p, me, (unsigned char *)q.p, ATTN_D, bh, rt, rows);
        if (p.lse) kbd_vec_store_n(p.lse + head0 + rt, lse, rows - rt);
        /* the stores have read Q before its shared memory is released (the block's exit) */
        if (kbd_scope_warp(me) == 0) {
          KBD_ELECT_ONE { kbd_bulk_wait_group_read(0); }
        }
      } else {
        kbd_vec_store_n(p.lse_part + part + rt, lse, rows - rt);
      }
    }
  } else {
    kbd_setmaxnreg_dec(ATTN_FA4_REGS_CORRECTION);
    const attn_range br = attn_fa4_range(&p, ATTN_KB, (int)kbd_block_x(), (int)kbd_block_z());
    const int n = br.n, n0 = br.nt[0], n1 = br.nt[1];
    KBD_ACC(f32, ATTN_SM, 8) fac;
    KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
    KBD_ACC_TILE(f32, ATTN_SM, 8) f;
    KBD_SOFTMAX_STATE(f) cs; /* the softmax state as the correction sees it: only its row_scale, read back */
    kbd_softmax_init(cs);
    for (int it = 0; it < n; ++it) {
      for (int t = 0; t < 2; ++t) {
        if (it >= (t ? n1 : n0)) continue;
        kbd_acc_bind(fac, tmem, t * ATTN_KB + ATTN_FAC, &pready[t]);
        kbd_acc_bind(oacc, tmem, 2 * ATTN_KB + t * ATTN_D, &ofull[t]);
        /* every phase of P ready is waited for, block 0's too: a parity wait skipped once would return at once
         * for the next phase (the barrier would still be in the phase before it) */
        kbd_acc_wait(fac, &pready[t], (unsigned)it & 1u);
        if (it > 0) {
          /* O_t holds the blocks before j at the old maximum: bring it to block j's once P_t,j-1 V_j-1, which
           * accumulates into it, is complete. The MMA warp issues P_t,j V_j only after the arrive below */
          kbd_acc_load(f, fac, 0);
          kbd_reduce_rows(cs.row_scale, f, KBD_RED_MAX); /* the row's factor: all 8 columns hold it */
          /* a warp whose 32 rows all kept their max (factor 1) leaves its lanes of O alone: with the lazy softmax
           * that is most warps after the first blocks, and each skip saves a D-column read and write of O */
          if (kbd_softmax_warp_rescales(cs)) {
            /* P ready already implies it (the softmax waited for S_t,j, which the MMA warp issued after
             * P_t,j-1 V_j-1 completed); waited for anyway, so that the correction does not depend on the MMA
             * warp's issue order. A skipped wait is harmless: this barrier cannot pass phase j - 1 before the
             * arrive below, so a later wait's parity still names the phase it means */
            kbd_acc_wait(oacc, &ofull[t], (unsigned)(it - 1) & 1u);
            KBD_ACC_UNROLL
            for (int c = 0; c < ATTN_D; c += ATTN_OC) {
              KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
              kbd_acc_load(o, oacc, c);
              kbd_softmax_rescale_packed(o, cs); /* FMUL2: half the issue slots of the O round trip */
              kbd_acc_store_async(oacc, o, c);   /* completed by the release below, per warp: no warpgroup barrier */
            }
          }
        }
        /* one arrive per warp (wait::st, fence::before_thread_sync): the factors are read, O_t's stores have landed
         * and O_t is the MMA warp's again */
        kbd_acc_release(oacc, &ocorr[t]);
      }
    }
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
#undef ATTN_FAC
#undef ATTN_POLY
#undef ATTN_Q128
#undef ATTN_QB
#undef ATTN__NAME
#undef ATTN__NAME2
