/* attention_kernel_sm100_d256.h - the sm_100a attention kernel of head_dim 256: FlashAttention-4's roles on ONE Q tile
 * whose two S buffers alternate by key block (attention.h has the block, docs/attention.md the walkthrough).
 * attention_kernels.h includes this file for head_dim 256 when it builds for sm_100a or for the CPU machine emulating
 * it (attention.h: ATTN_TEXT_256), after defining ATTN_KERNEL, ATTN_DT (bf16 or f16), ATTN_T (its C type) and ATTN_D.
 *
 * Why one tile: attention_kernel_sm100.h keeps two Q tiles in flight (S and O of each in Tensor Memory), which at
 * head_dim 256 would take 2 x (64 + 256) = 640 of the 512 columns. One tile with two S buffers takes 2 x 64 + 256 = 384
 * and keeps the overlap FA4 is after: while the softmax works on S_j (one buffer), the MMA warp issues P_j-1 V_j-1 and
 * S_j+1 (the other buffer). Against the FA3 text this head_dim ran before, the MMAs are M = 128 (tcgen05's full
 * shape; M = 64 uses half of the tensor core) and P never goes through shared memory.
 *
 * A block owns 128 packed query rows (ATTN_FA4_D256_BM), 384 threads:
 *   warp 0          the TMA warp: Q (2 x 4 boxes of the 64-row map), then K_j and V_j into the 2-stage rings
 *   warp 1          the MMA warp: S_0 and S_1 first, then per key block j: O += P_j V_j (once the correction brought O
 *                   to block j's maximum), and S_j+2 into buffer j % 2 once P_j V_j, which reads P_j there, completed;
 *                   at the end one commit to "O done" for the epilogue
 *   warpgroup 1     the softmax, thread i = row i: S_j with tcgen05.ld from buffer j % 2, the lazy online softmax, P_j
 *                   over S_j's first columns and the row factors beside it, one arrive per warp; at the end O / sum
 *                   and the log-sum-exp
 *   warpgroup 2     the correction: per key block, the factors; if any row of the warp moved its max (a vote), O *= the
 *                   factors once P_j-1 V_j-1 completed; one arrive per warp
 *   warps 2-3       no role
 * Tensor Memory (512 columns allocated): S buffer b at [b BN, (b + 1) BN), O at [2 BN, 2 BN + D). P_j takes the first
 * BN/2 columns of its S buffer (two 16-bit values per 32-bit cell), the row factors the 8 columns after them. 384
 * threads leave 168 registers each (no setmaxnreg: no role needs more).
 */
#include "attention_store_o.h" /* attn_fa4_store_o: the epilogue's TMA store of O */

#define ATTN__NAME2(a, b, c) a##b##_##c
#define ATTN__NAME(a, b, c) ATTN__NAME2(a, b, c)
#define ATTN_K ATTN__NAME(attn_k_, ATTN_DT, ATTN_D)
#define ATTN_V ATTN__NAME(attn_v_, ATTN_DT, ATTN_D)
#define ATTN_KB ATTN_BN(ATTN_D)
#define ATTN_OC 32             /* output columns per epilogue / correction chunk */
#define ATTN_SM ATTN_FA4_TM    /* rows of the Q tile: one M = 128 MMA, thread i of the softmax or correction = row i */
#define ATTN_QBOX ATTN_WM      /* rows of the Q tensor map's box (attention_run.c) */
#define ATTN_FAC (ATTN_KB / 2) /* an S buffer's column of the row factors: the first after P */
#define ATTN_O (2 * ATTN_KB)   /* O's first column */
#define ATTN_Q128 ATTN__NAME(attn_q128_, ATTN_DT, ATTN_D)
#define ATTN_QB ATTN__NAME(attn_qbox_, ATTN_DT, ATTN_D)
KBD_STATIC_ASSERT(2 * ATTN_BN(ATTN_D) + ATTN_D <= ATTN_TMEM_COLS,
                  "attention_kernel_sm100_d256.h: two S buffers and O must fit the Tensor Memory allocation");

KBD_KERNEL(ATTN_KERNEL, ATTN_FA4_D256_THREADS, attn_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  /* the softmax warpgroup: the epilogue's staging of O */
  KBD_WARP_RANGE(me, 4, 4);
  attn_smem l;
  const kbd_smem_plan plan = attn_layout_fa4_256(&l);
  kbd_smem_plan_check_launch(&plan);
  unsigned char *smem = (unsigned char *)kbd_dynamic_smem();
  kbd_mbarrier *qfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.qfull);
  kbd_mbarrier *kfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kfull);
  kbd_mbarrier *kempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.kempty);
  kbd_mbarrier *vfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vfull);
  kbd_mbarrier *vempty = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.vempty);
  kbd_mbarrier *sfull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.sfull);   /* per S buffer: S_j is complete */
  kbd_mbarrier *pready = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.pready); /* per S buffer: P_j and its factors */
  kbd_mbarrier *ocorr = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.ocorr);   /* O rescaled for block j */
  kbd_mbarrier *ofull = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.ofull);   /* O += P_j V_j is complete */
  kbd_mbarrier *odone = KBD_SMEM_PLAN_ARRAY(kbd_mbarrier, smem, l.odone);   /* every P V is complete */
  kbd_tmem *tmem = KBD_SMEM_PLAN_ARRAY(kbd_tmem, smem, l.tmem);

  if (kbd_warp_id() == 0) {
    KBD_ELECT_ONE {
      for (int s = 0; s < ATTN_STAGES; ++s) {
        kbd_mbarrier_init(&kfull[s], 1); /* the TMA warp's arrive.expect_tx */
        kbd_mbarrier_init(&vfull[s], 1);
        kbd_mbarrier_init(&kempty[s], 1); /* the MMA warp's commit */
        kbd_mbarrier_init(&vempty[s], 1);
      }
      for (int b = 0; b < 2; ++b) {
        kbd_mbarrier_init(&sfull[b], 1);                          /* the MMA warp's commit */
        kbd_mbarrier_init(&pready[b], KBD_ACC_RELEASES(ATTN_SM)); /* one arrive per softmax warp */
      }
      kbd_mbarrier_init(qfull, 1);
      kbd_mbarrier_init(ocorr, KBD_ACC_RELEASES(ATTN_SM)); /* one arrive per correction warp */
      kbd_mbarrier_init(ofull, 1);
      kbd_mbarrier_init(odone, 1);
      kbd_tma_prefetch_map(&p.k);
      kbd_tma_prefetch_map(&p.v);
    }
    kbd_tmem_alloc(tmem, ATTN_TMEM_COLS);
  }
  kbd_sync(); /* barriers initialised, Tensor Memory address written */

  /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb0 + n) of split kbd_block_z() */
  const int rows = p.group * p.seq_q, r0 = (int)kbd_block_x() * ATTN_SM, bh = (int)kbd_block_y();
  const int mrows = rows - r0 < ATTN_SM ? rows - r0 : ATTN_SM;
  int kb0, kb1;
  attn_key_blocks(r0, mrows, p.seq_q, p.seq_k, p.causal, ATTN_KB, (int)kbd_block_z(), p.splits, &kb0, &kb1);
  const int n = kb1 - kb0;
  if (kbd_warp_id() == 0) {
    /* the TMA warp. K_j and V_j alternate in one queue: K_j+2 is needed after P_j V_j, V_j+1 after S_j+1 */
    KBD_ELECT_ONE {
      if (n > 0) { /* Q only when there is a key block: nothing waits for it otherwise */
        ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, 0);
        kbd_mbarrier_arrive_expect_tx(qfull, KBD_STILE_BYTES(q));
        for (int c = 0; c < ATTN_D / 64; ++c)
          for (int h = 0; h < ATTN_SM / ATTN_QBOX; ++h) {
            const size_t at = l.q + (size_t)(ATTN_SM * c + ATTN_QBOX * h) * 128u;
            ATTN_QB box = KBD_SMEM_PLAN_STILE(ATTN_QB, smem, at, 0);
            kbd_tma_load3d(box, &p.q, qfull, bh, r0 + ATTN_QBOX * h, 64 * c); /* past the end: 0 */
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
    /* the MMA warp: one elected thread issues and commits everything (tcgen05.commit tracks its own MMAs) */
    KBD_ACC(f32, ATTN_SM, ATTN_KB) s;
    KBD_ACC(f32, ATTN_SM, ATTN_D) o;
    KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pt;
    ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, 0);
    kbd_acc_bind(o, tmem, ATTN_O, ofull);
    if (n > 0) kbd_mbarrier_wait(qfull, 0);
    for (int it = 0; it < 2 && it < n; ++it) { /* S_0 and S_1, one per buffer */
      ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, it);
      kbd_acc_bind(s, tmem, it * ATTN_KB, &sfull[it]);
      kbd_mbarrier_wait(&kfull[it], 0);
      kbd_mma_issue(s, q, k, 0);
      kbd_mma_commit(s, &sfull[it]);
      kbd_mma_commit(s, &kempty[it]);
    }
    /* the key loop is one elected section (docs/attention.md): its thread waits, issues and commits */
    KBD_ELECT_ONE {
      for (int it = 0; it < n; ++it) {
        const int b = it % 2, sp = it % ATTN_STAGES;
        const unsigned par = (unsigned)it & 1u;
        ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, sp);
        kbd_mbarrier_wait(&vfull[sp], (unsigned)(it / ATTN_STAGES) & 1u);
        /* O += P_j V_j once the correction brought O to block j's maximum: it arrives on "O corrected" after waiting
         * for "P ready", so that one wait also orders the softmax's P stores before the MMA */
        kbd_tmem_a_bind(pt, tmem, b * ATTN_KB);
        kbd_acc_wait(o, ocorr, par);
        kbd_mma_ts_issue_elected(o, pt, v, it > 0);
        kbd_mma_commit_elected(o, ofull);
        kbd_mma_commit_elected(o, &vempty[sp]);
        if (it + 2 < n) {
          /* S_j+2 over P_j: only once P_j V_j has read it (PTX orders two MMAs of one thread only when they share the
           * accumulator). Meanwhile the softmax works on S_j+1, in the other buffer */
          const int sn = (it + 2) % ATTN_STAGES;
          ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, sn);
          kbd_acc_bind(s, tmem, b * ATTN_KB, &sfull[b]);
          kbd_mbarrier_wait(&kfull[sn], (unsigned)((it + 2) / ATTN_STAGES) & 1u);
          kbd_acc_wait(s, ofull, par);
          kbd_mma_issue_elected(s, q, k, 0);
          kbd_mma_commit_elected(s, &sfull[b]);
          kbd_mma_commit_elected(s, &kempty[sn]);
        }
      }
    }
    /* the epilogue's barrier: one phase, so its wait cannot be mistaken (the softmax may reach the epilogue while
     * O full is still two phases short, where a parity wait on it would return at once) */
    if (n > 0) kbd_mma_commit(o, odone);
  } else if (kbd_warpgroup_id() == 1) {
    KBD_ACC(f32, ATTN_SM, ATTN_KB) s;
    KBD_ACC(f32, ATTN_SM, 8) fac;
    KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
    KBD_TMEM_A(ATTN_DT, ATTN_SM, ATTN_KB) pt;
    kbd_acc_bind(oacc, tmem, ATTN_O, ofull);
    KBD_ACC_TILE(f32, ATTN_SM, ATTN_KB) sc; /* S_j of this thread's row, then P_j in f32 */
    KBD_SOFTMAX_STATE(sc) st;
    kbd_softmax_init(st);
    for (int it = 0, k0 = kb0 * ATTN_KB; it < n; ++it, k0 += ATTN_KB) {
      const int b = it % 2;
      kbd_acc_bind(s, tmem, b * ATTN_KB, &sfull[b]);
      kbd_acc_bind(fac, tmem, b * ATTN_KB + ATTN_FAC, &pready[b]);
      kbd_tmem_a_bind(pt, tmem, b * ATTN_KB);
      kbd_acc_wait(s, &sfull[b], (unsigned)(it / 2) & 1u);
      kbd_acc_load(sc, s, 0);
      /* mask by position only where a block crosses the end of the keys or the causal diagonal */
      if (attn_block_masked(r0, mrows, k0, ATTN_KB, p.seq_q, p.seq_k, p.causal))
        KBD_MAP(sc, sc, x, r, c, c < attn_visible_cols(r0 + r, k0, p.seq_q, p.seq_k, p.causal) ? x : -INFINITY);
      /* lazy (FA4): a row keeps its max until a block's max exceeds it by 2^8 in P (attention_kernel_sm100.h) */
      /* the exponents two per FFMA2; every exponential on MUFU (share 0): one tile's 64 MUFU.EX2 per block take ~530
       * of the block's 1024 tensor-core cycles here, so a polynomial share would only add issue slots
       * (docs/attention.md, "FA4's exponential") */
      kbd_softmax_update_lazy_poly(sc, st, sc, p.scale, KBD_SOFTMAX_SLACK, 0);
      /* P_j over S_j's columns (S_j is in registers now; P_j-2 V_j-2 read them before S_j was issued), rounded to
       * the input type while the store packs the pairs */
      kbd_tmem_a_store(pt, sc, 0);
      /* the correction's factors, exp(scale (m_old - m_new)) of each row, in the 8 columns after P */
      KBD_ACC_TILE(f32, ATTN_SM, 8) f;
      kbd_fill(f, 1.0f);
      kbd_softmax_rescale_packed(f, st); /* every column of row r: the row's factor */
      kbd_acc_store_async(fac, f, 0);    /* no warpgroup barrier: the arrive below hands it on */
      /* one arrive per warp: wait::st and fence::before_thread_sync order P's and the factors' stores before the
       * MMA warp's P V and the correction's load */
      kbd_tmem_a_ready(pt, &pready[b]);
    }
    if (n > 0) {
      kbd_acc_wait(oacc, odone, 0);
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
     * the tile's last P V, which tracks every earlier tcgen05.mma of that thread, its last S among them (a tile without
     * key blocks never loaded Q). Each thread writes its row's chunk (16-byte st.shared, TMEM_ACC), fences it for the
     * async proxy, and attn_fa4_store_o (attention_store_o.h) has one elected thread store the tile's 64 x 64 boxes
     * (the box of o's map, as of q's) that start before the end of the packed rows; the map's extent clips the rest of
     * the last one. splits > 1: the f32 partials keep their masked generic stores (attention_kernel.h). */
    const long long head0 = (long long)bh * rows; /* first packed row of this (batch, kv head) */
    const long long part = (long long)kbd_block_z() * kbd_grid_y() * rows + head0; /* splits > 1 */
    ATTN_Q128 q = KBD_SMEM_PLAN_STILE(ATTN_Q128, smem, l.q, 0);
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
        kbd_store2d(p.o_part + part * ATTN_D, o, rows, ATTN_D, ATTN_D, r0, c);
      }
    }
    if (p.splits == 1) {
      attn_fa4_store_o(&p, me, (unsigned char *)q.p, ATTN_D, bh, r0, rows);
      if (p.lse) kbd_vec_store_n(p.lse + head0 + r0, lse, rows - r0);
      /* the stores have read Q before its shared memory is released (the block's exit) */
      if (kbd_scope_warp(me) == 0) {
        KBD_ELECT_ONE { kbd_bulk_wait_group_read(0); }
      }
    } else {
      kbd_vec_store_n(p.lse_part + part + r0, lse, rows - r0);
    }
  } else if (kbd_warpgroup_id() == 2) {
    KBD_ACC(f32, ATTN_SM, 8) fac;
    KBD_ACC(f32, ATTN_SM, ATTN_D) oacc;
    KBD_ACC_TILE(f32, ATTN_SM, 8) f;
    KBD_SOFTMAX_STATE(f) cs; /* the softmax state as the correction sees it: only its row_scale, read back */
    kbd_softmax_init(cs);
    kbd_acc_bind(oacc, tmem, ATTN_O, ofull);
    for (int it = 0; it < n; ++it) {
      const int b = it % 2;
      kbd_acc_bind(fac, tmem, b * ATTN_KB + ATTN_FAC, &pready[b]);
      /* every phase of P ready is waited for, block 0's too (attention_kernel_sm100.h) */
      kbd_acc_wait(fac, &pready[b], (unsigned)(it / 2) & 1u);
      if (it > 0) {
        kbd_acc_load(f, fac, 0);
        kbd_reduce_rows(cs.row_scale, f, KBD_RED_MAX); /* the row's factor: all 8 columns hold it */
        /* O holds the blocks before j at the old maximum; P_j-1 V_j-1 accumulates into it. Waited for by every
         * warp, rescaling or not: with two S buffers the softmax runs a block ahead of P V (S_j was issued after
         * P_j-2 V_j-2, not P_j-1 V_j-1), and without this wait "O corrected" could complete phase j before the MMA
         * warp has waited for phase j - 1 (a lapped parity) */
        kbd_acc_wait(oacc, ofull, (unsigned)(it - 1) & 1u);
        /* a warp whose 32 rows all kept their max leaves its lanes of O alone (the lazy softmax) */
        if (kbd_softmax_warp_rescales(cs)) {
          KBD_ACC_UNROLL
          for (int c = 0; c < ATTN_D; c += ATTN_OC) {
            KBD_ACC_TILE(f32, ATTN_SM, ATTN_OC) o;
            kbd_acc_load(o, oacc, c);
            kbd_softmax_rescale_packed(o, cs); /* FMUL2: half the issue slots */
            kbd_acc_store_async(oacc, o, c);   /* completed by the release below, per warp */
          }
        }
      }
      /* one arrive per warp (wait::st, fence::before_thread_sync): the factors are read, O's stores have landed
       * and O is the MMA warp's again */
      kbd_acc_release(oacc, ocorr);
    }
  }
  kbd_sync(); /* every Tensor Memory read is done before the columns are freed */
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, ATTN_TMEM_COLS);
#endif
}

#undef ATTN_K
#undef ATTN_V
#undef ATTN_KB
#undef ATTN_OC
#undef ATTN_SM
#undef ATTN_QBOX
#undef ATTN_FAC
#undef ATTN_O
#undef ATTN_Q128
#undef ATTN_QB
#undef ATTN__NAME
#undef ATTN__NAME2
