/* attention_kernel.h - the attention kernel with FlashAttention-3's schedule (attention.h has the block's structure,
 * docs/attention.md the walkthrough). attention_kernels.h includes this file once per (type, head_dim) it is the text
 * of (attention.h: ATTN_TEXT_*: every head_dim on sm_90a, head_dim 256 on sm_100a, whose head_dim 64 and 128 use
 * attention_kernel_sm100.h) after defining
 *   ATTN_KERNEL  the kernel's name      ATTN_DT  bf16 or f16      ATTN_T  its C type      ATTN_D  64, 128 or 256
 * Everything else is ordinary code: the same text builds for sm_90a, sm_100a and the CPU. The archs differ where
 * P = softmax(S) goes for O += P V (ATTN_P_ROUND, ATTN_P_TO_MMA and ATTN_PV below) and in the mask's form (ATTN_MASK:
 * the positions of sm_90a's fragment).
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

/* O += P V. wgmma (sm_90a) takes its A operand from the registers of the warpgroup, and the bf16 register view
 * of an accumulator is that operand's fragment: P is rounded in place, pair by pair, at the top of the next block
 * (ATTN_P_ROUND). tcgen05.mma (sm_100a) reads A from shared memory only, so P is stored to the warpgroup's P tile
 * and fenced for the async proxy first (the barrier inside kbd_mma orders every warp's stores before the leader
 * issues). */
#if KBD_MMA_ARCH == 90
/* P of the block before, left in S's registers (as f32) by its softmax, rounded into pr and pinned there; then S's
 * old values are dead (the next S = Q K^T overwrites them): docs/attention.md "Why the loop looks like this" */
#define ATTN_P_ROUND(pr, sc, sacc)                                                                                     \
  do {                                                                                                                 \
    kbd_acc_load(sc, sacc, 0);                                                                                         \
    ATTN_CONVERT_P(pr, sc, ATTN_DT);                                                                                   \
    kbd_mma_rs_pin(pr);                                                                                                \
    kbd_acc_discard(sacc);                                                                                             \
  } while (0)
#define ATTN_P_TO_MMA(pt, pr, sc) ((void)(pt)) /* P stays in S's registers until the next ATTN_P_ROUND */
/* The mask of a block: sc[r][c] = -inf where c >= bound(r) - k0 (keys [bound, ...) of row r hidden; bound: an
 * expression of r, the same every block). A compare and a select per element cost 1.38x an unmasked block; here each
 * row costs a few integer instructions and each element one FSEL whose predicate comes from R2P (7 predicates per
 * instruction). In the WGMMA_ACC fragment (kbd/layout.h) a thread's elements of one row are at columns c0 + 8j + b in
 * element order (c0 = 2 (lane % 4), b = 0, 1), so those left of the bound are the first
 * n = 2 floor(lim / 8) + min(lim % 8, 2) (lim = bound - k0 - c0 > 0) of the row's elements: the low n bits of a
 * word, and "bit e of a word" with a constant e is what ptxas turns into R2P. A row has at most 32 elements per thread
 * (128 keys); n = 32 is a select (C leaves a shift by 32 undefined).
 * ATTN_MASK_ROWS, once before the key loop: lim0[l][k] = bound(r) - c0 of row slot k (element 2k is its first) of
 * held lane l. ATTN_MASK then starts from lim0 - k0: the row bound (a wrap by seq_q, a float-reciprocal divide, the
 * causal offset: some 25 instructions for the thread's two rows) was computed again in every masked block. */
#define ATTN_MASK_ROWS(lim0, sc, r, bound)                                                                             \
  do {                                                                                                                 \
    const kbd_tile_shape attn_ms_ = KBD__SHAPE(sc);                                                                    \
    for (int attn_ml_ = 0; attn_ml_ < KBD_LANES_HELD; ++attn_ml_) {                                                    \
      const int attn_mt_ = KBD__TID(sc, attn_ml_);                                                                     \
      KBD_UNROLL for (int attn_mk_ = 0; attn_mk_ < 2; ++attn_mk_) {                                                    \
        const kbd_coord attn_mc_ = kbd_tile_coord(attn_ms_, attn_mt_, 2 * attn_mk_);                                   \
        const int r = attn_mc_.row;                                                                                    \
        (lim0)[attn_ml_][attn_mk_] = (bound)-attn_mc_.col;                                                             \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)
#define ATTN_MASK(sc, lim0, k0)                                                                                        \
  do {                                                                                                                 \
    KBD_STATIC_ASSERT(KBD_LAYOUT(sc) == KBD_LAYOUT_WGMMA_ACC && KBD_ROWS(sc) == 64 && KBD_COLS(sc) <= 128,             \
                      "attention: ATTN_MASK reads the positions of a 64-row WGMMA_ACC fragment of at most 128 "        \
                      "columns (one 32-bit word per row)");                                                            \
    for (int attn_ml_ = 0; attn_ml_ < KBD_LANES_HELD; ++attn_ml_) {                                                    \
      KBD_UNROLL for (int attn_mk_ = 0; attn_mk_ < 2; ++attn_mk_) {                                                    \
        const int attn_lim_ = (lim0)[attn_ml_][attn_mk_] - (k0);                                                       \
        const int attn_mn_ = attn_lim_ <= 0 ? 0 : attn_lim_ / 8 * 2 + (attn_lim_ % 8 < 2 ? attn_lim_ % 8 : 2);         \
        const uint32_t attn_mm_ = attn_mn_ >= 32 ? 0xffffffffu : (1u << attn_mn_) - 1u;                                \
        KBD_UNROLL for (int attn_me_ = 0; attn_me_ < KBD_COLS(sc) / 4; ++attn_me_) {                                   \
          const int attn_mi_ = 4 * (attn_me_ / 2) + 2 * attn_mk_ + attn_me_ % 2; /* the row's element e */             \
          if (!(attn_mm_ & (1u << attn_me_))) (sc).v[attn_ml_][attn_mi_] = -INFINITY;                                  \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)
#define ATTN_PV(oacc, pr, pt, v) kbd_mma_rs(oacc, pr, v, 1) /* the last block's, after the key loop */
#else
#define ATTN_P_TO_MMA(pt, pr, sc)                                                                                      \
  do {                                                                                                                 \
    ATTN_CONVERT_P(pr, sc, ATTN_DT);                                                                                   \
    kbd_stile_store(pt, pr);                                                                                           \
    kbd_fence_proxy_async();                                                                                           \
  } while (0)
#define ATTN_PV(oacc, pr, pt, v) kbd_mma(oacc, pt, v, 1)
#endif
#define ATTN_KSTRIDE ((int)KBD_SMEM_PLAN_STILE_STRIDE(ATTN_K)) /* bytes from one ring stage to the next */
#define ATTN_VSTRIDE ((int)KBD_SMEM_PLAN_STILE_STRIDE(ATTN_V))

KBD_KERNEL(ATTN_KERNEL, ATTN_THREADS(ATTN_D), attn_params) {
#if KBD_KERNEL_CODE /* nvcc's host pass needs only the launcher: it skips the body (docs/kernels.md) */
  KBD_WARP_RANGE(producer, 0, 4);
  /* the consumers' turns on the tensor cores (two consumers): both warpgroups meet at turn<g> - warpgroup g
   * waits there, the other one arrives - so each is a 256-thread barrier of its own id */
  KBD_WARP_RANGE(turn0, 4, 4 * ATTN_NC);
  KBD_WARP_RANGE(turn1, 4, 4 * ATTN_NC);
  /* each consumer warpgroup on its own, for the epilogue's staging of O (with one consumer, wg1 names the same warps
   * as wg0 under another barrier id and is never used) */
  KBD_WARP_RANGE(wg0, 4, 4);
  KBD_WARP_RANGE(wg1, 4 * ATTN_NC, 4);

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
    if (ATTN_NC == 2) kbd_setmaxnreg_dec(24); /* 24 x 128 + 240 x 256 = 168 x 384, the launch budget */
    /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb1) of split kbd_block_z()
     * (computed after setmaxnreg in each branch: a value live across the register reallocation is spilled) */
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_BM(ATTN_D);
    int kb0, kb1;
    attn_key_blocks(r0, rows - r0 < ATTN_BM(ATTN_D) ? rows - r0 : ATTN_BM(ATTN_D), p.seq_q, p.seq_k, p.causal, ATTN_KB,
                    (int)kbd_block_z(), p.splits, &kb0, &kb1);
    /* warp 0 loads Q and the K blocks, warp 1 the V blocks. The consumers take K one block ahead of V (S of
     * block j is issued with O += P V of block j-1), so one warp loading both in block order would hold the
     * next K behind a V stage that frees only a block later. */
    if (kbd_warp_id() == 0) {
      KBD_ELECT_ONE {
        ATTN_Q q0 = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, 0);
        kbd_mbarrier_arrive_expect_tx(qfull, ATTN_NC * KBD_STILE_BYTES(q0));
        for (int g = 0; g < ATTN_NC; ++g) {
          ATTN_Q q = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, g);
          kbd_tma_load3d(q, &p.q, qfull, bh, r0 + g * ATTN_WM, 0); /* rows past the head's end load as zeros */
        }
      }
    }
    if (kbd_warp_id() < 2) {
      const int is_v = kbd_warp_id() == 1;
      for (int kb = kb0; kb < kb1; ++kb) {
        const int it = kb - kb0, s = it % ATTN_STAGES;
        const unsigned free_parity = ((unsigned)(it / ATTN_STAGES) & 1u) ^ 1u; /* a fresh barrier counts as freed */
        if (is_v) {
          ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, s);
          kbd_mbarrier_wait(&vempty[s], free_parity);
          KBD_ELECT_ONE {
            kbd_mbarrier_arrive_expect_tx(&vfull[s], KBD_STILE_BYTES(v));
            kbd_tma_load3d(v, &p.v, &vfull[s], bh, kb * ATTN_KB, 0);
          }
        } else {
          ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, s);
          kbd_mbarrier_wait(&kempty[s], free_parity);
          KBD_ELECT_ONE {
            kbd_mbarrier_arrive_expect_tx(&kfull[s], KBD_STILE_BYTES(k));
            kbd_tma_load3d(k, &p.k, &kfull[s], bh, kb * ATTN_KB, 0);
          }
        }
      }
    }
  } else {
    if (ATTN_NC == 2) kbd_setmaxnreg_inc(240);
    /* this block: packed query rows r0.. of (batch, kv head) bh, key blocks [kb0, kb1) of split kbd_block_z()
     * (computed after setmaxnreg in each branch: a value live across the register reallocation is spilled) */
    const int rows = p.group * p.seq_q, bh = (int)kbd_block_y(), r0 = (int)kbd_block_x() * ATTN_BM(ATTN_D);
    int kb0, kb1;
    attn_key_blocks(r0, rows - r0 < ATTN_BM(ATTN_D) ? rows - r0 : ATTN_BM(ATTN_D), p.seq_q, p.seq_k, p.causal, ATTN_KB,
                    (int)kbd_block_z(), p.splits, &kb0, &kb1);
    const int g = kbd_warpgroup_id() - 1;
    const kbd_scope my_turn = g == 0 ? turn0 : turn1, next_turn = g == 0 ? turn1 : turn0;
    const int mr0 = r0 + g * ATTN_WM; /* this warpgroup's first packed row */
    const int mrows = rows - mr0 < 1 ? 1 : rows - mr0 < ATTN_WM ? rows - mr0 : ATTN_WM;
    ATTN_Q q = KBD_SMEM_PLAN_STILE(ATTN_Q, smem, l.q, g);
    ATTN_P pt = KBD_SMEM_PLAN_STILE(ATTN_P, smem, l.pt, g); /* sm_100a: P for the MMA */
    KBD_ACC(f32, ATTN_WM, ATTN_KB) sacc;
    KBD_ACC(f32, ATTN_WM, ATTN_D) oacc;
    kbd_acc_bind(sacc, tmem, g * (ATTN_KB + ATTN_D), &sdone[g]);
    kbd_acc_bind(oacc, tmem, g * (ATTN_KB + ATTN_D) + ATTN_KB, &odone[g]);
    KBD_ACC_TILE(f32, ATTN_WM, ATTN_KB) sc;     /* scores of block j, then its probabilities */
    KBD_ACC_TILE(ATTN_DT, ATTN_WM, ATTN_KB) pr; /* P of the block whose O += P V is issued next */
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

    /* The schedule (FA3's two overlaps, docs/attention.md "The pipeline"). In its turn on the tensor cores a
     * warpgroup issues S_j = Q K_j^T and then O += P_{j-1} V_{j-1}, passes the turn (the other consumer's MMAs run
     * while this one does its softmax) and waits for S_j only (wgmma.wait_group 1 retires every group but the
     * newest), so P_{j-1} V_{j-1} runs under the softmax of block j. Then it waits for that MMA and rescales O if a
     * row's max moved; nothing is in flight at the back edge. The softmax works on S's own registers and its result
     * goes back into the accumulator (kbd_acc_store, on sm_90a a copy the compiler removes). sm_90a rounds P_j (one
     * packed cvt per pair) at the top of the next block, just before S_{j+1} = Q K^T overwrites those registers
     * (ATTN_P_ROUND): P then lives only from there to its P V's wait, and ptxas allocates it in the registers the
     * wgmma reads (rounded at the end of a block, the loop-carried P was moved into them: 46 IMAD.MOV per block). S, O
     * and P are 64 + 64 + 32 of the 240 registers at head_dim 128. Every
     * wait that precedes a read of an accumulator retires its MMA on every path (the first block, which has no P V,
     * waits for S with wait_group 0 in its own branch): ptxas then proves that no accumulator register is touched while
     * its wgmma is in flight. A wgmma left in flight across the back edge made the loop's register copies land between
     * two wgmmas, and a wait it cannot pair with its issue's branch serializes every wgmma of the kernel (C7514, C7515,
     * C7520). */
    kbd_mbarrier_wait(qfull, 0);
    if (ATTN_NC == 2 && g == 1 && kb0 < kb1) kbd_scope_arrive(turn0); /* consumer 0 has the first turn */
#if KBD_MMA_ARCH == 90
    kbd_acc_discard(sacc); /* defined values for the first block's ATTN_P_ROUND, whose pr no MMA reads */
    /* The MMA operands' descriptors, made once: Q's (Q stays in its tile the whole loop: ring stride 0) and stage 0's
     * of the K and V rings, moved by the stage in the loop (kbd_mma_ring, kbd_mma_rs_ring). kbd_mma / kbd_mma_rs
     * rebuilt each from its tile's address every block: a shuffle, an R2UR, a mask, a shift and an or per operand. */
    const ATTN_K attn_k0_ = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, 0);
    const ATTN_V attn_v0_ = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, 0);
    const uint64_t attn_qd_ = kbd_mma_desc_of(q), attn_kd_ = kbd_mma_desc_of(attn_k0_);
    const uint64_t attn_vd_ = kbd_mma_desc_of(attn_v0_);
    /* The rings' barriers by 32-bit shared address (8 bytes a stage) from ONE base broadcast from lane 0, the others
     * at the plan's constant distances: through kbd_mbarrier pointers and kbd_mma_release's pending pointer each
     * block rebuilt 64-bit generic addresses from the shared window (S2R SR_SWINHI, 64-bit adds) and null-tested
     * them; with four bases ptxas spilled 28 bytes of the mask's row values in attn_bf16_128's loop */
    const uint32_t attn_kfull_ = kbd_mbarrier_addr_uniform(kfull);
    const uint32_t attn_kempty_ = attn_kfull_ + (uint32_t)(l.kempty - l.kfull);
    const uint32_t attn_vfull_ = attn_kfull_ + (uint32_t)(l.vfull - l.kfull);
    const uint32_t attn_vempty_ = attn_kfull_ + (uint32_t)(l.vempty - l.kfull);
    const int attn_lead_ = (kbd_warp_id() & 3) == 0; /* the warpgroup's first warp frees V's stages */
#endif
    /* the mask's loop invariants: the warpgroup's first query index, 1 / seq_q rounded up (attn_row_visible) and
     * the key from which a block needs the mask (attn_mask_from); their 32-bit divides, ~20 instructions each,
     * are paid once here */
    const int q0 = mr0 % p.seq_q, mask_from = attn_mask_from(mr0, mrows, p.seq_q, p.seq_k, p.causal);
    const float qinv = nextafterf(1.0f / (float)p.seq_q, INFINITY);
#if KBD_MMA_ARCH == 90
    int attn_lim0_[KBD_LANES_HELD][2]; /* ATTN_MASK's row bounds */
    ATTN_MASK_ROWS(attn_lim0_, sc, r, attn_row_visible(q0 + r, p.seq_q, qinv, p.seq_k, p.causal));
#endif
    /* the ring stage and phase of block kb (K) and of block kb - 1 (V), stepped per block: recomputed from kb - kb0
     * (a signed modulo and divide per ring) they cost 8 instructions more per block at head_dim 128 */
    unsigned ks = 0, kph = 0, vs = 0, vph = 0;
    for (int kb = kb0; kb < kb1; ++kb) {
      const unsigned s = ks;
#if KBD_MMA_ARCH == 90
      /* P_{j-1} into the registers its P V reads. On every block, the first too (whose pr nobody reads): under
       * `if (kb > kb0)` the rounding is a branch before the wgmmas that ptxas answers with C7519 / C7517 */
      ATTN_P_ROUND(pr, sc, sacc);
#endif

      /* this warpgroup's turn: wait until the other consumer has issued its MMAs */
      if (ATTN_NC == 2) kbd_scope_sync(my_turn);
#if KBD_MMA_ARCH == 90
      kbd_mbarrier_wait_at(attn_kfull_ + 8u * s, kph);
      kbd_mma_ring(sacc, ATTN_Q, ATTN_K, attn_qd_, 0, attn_kd_, ATTN_KSTRIDE, s, 0);
      if (kb > kb0) {
        kbd_mbarrier_wait_at(attn_vfull_ + 8u * vs, vph);
        kbd_mma_rs_ring(oacc, pr, ATTN_V, attn_vd_, ATTN_VSTRIDE, vs, 1);
        /* S_j complete (wait_group 1), P_{j-1} V_{j-1} not: K's stage is free */
        kbd_mma_release_at(sacc, attn_kempty_ + 8u * s, 0u);
      } else {
        kbd_mma_wait_at(sacc, attn_kempty_ + 8u * s, 0u);
      }
#else
      {
        ATTN_K k = KBD_SMEM_PLAN_STILE(ATTN_K, smem, l.k, s);
        kbd_mbarrier_wait(&kfull[s], kph);
        kbd_mma(sacc, q, k, 0);
        kbd_mma_release(sacc, &kempty[s]);
      }
      if (kb > kb0) {
        /* every warp waits for V itself: on sm_100a only the leader issues the MMA and releases the stage, so
         * a warp that had not waited could find the producer two phases further on this barrier */
        const unsigned sp = vs;
        ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, sp);
        kbd_mbarrier_wait(&vfull[sp], vph);
        ATTN_PV(oacc, pr, pt, v);
        kbd_mma_release(oacc, &vempty[sp]);
        /* S_j complete: this commits once more and waits for both MMAs (the sdone wait follows an issue, as it
         * must: two waits on sdone with no MMA and its warpgroup barrier between them let the leader's commit complete
         * a phase that a slow warp has not finished waiting for) */
        kbd_mma_wait(sacc);
      } else {
        kbd_mma_wait(sacc);
      }
#endif
      /* pass the turn (the last turn of consumer 1 passes nothing: consumer 0 has no turn left to take) */
      if (ATTN_NC == 2 && (g == 0 || kb + 1 < kb1)) kbd_scope_arrive(next_turn);

      kbd_acc_load(sc, sacc, 0);
      /* mask by position only where a block crosses the end of the keys or the causal diagonal */
      const int k0 = kb * ATTN_KB;
#if KBD_MMA_ARCH == 90
      if (k0 + ATTN_KB > mask_from) ATTN_MASK(sc, attn_lim0_, k0);
#else
      if (k0 + ATTN_KB > mask_from)
        KBD_MAP(sc, sc, x, r, c, c < attn_row_visible(q0 + r, p.seq_q, qinv, p.seq_k, p.causal) - k0 ? x : -INFINITY);
#endif
      /* online softmax: sc becomes P_j = exp(scale (S_j - m)), with FlashAttention-4's lazy max: a row's max moves
       * only when the block would make some p exceed 2^KBD_SOFTMAX_SLACK, so after the first blocks most warps keep
       * theirs and skip the rescale of O below (64 FMUL per block at head_dim 128); p <= 2^8 stays exact to its
       * rounding in bf16 and f16, and the final O / sum cancels the stale max. Each lane keeps its own part of the
       * row sums (FlashAttention-3): only the end reads the sums, so their shuffles run once, after the loop */
      kbd_softmax_update_lazy_part(sc, st, sc, p.scale, KBD_SOFTMAX_SLACK);
#if KBD_MMA_ARCH == 90
      kbd_acc_store(sacc, sc, 0); /* P_j in S's registers: the next S overwrites them (see above) */
#endif
      /* P_{j-1} V_{j-1} complete: its A operand (pr on sm_90a, the P tile on sm_100a) and O are free */
      kbd_mma_wait(oacc);
#if KBD_MMA_ARCH == 90
      /* and its V stage, freed by one thread of the warpgroup (the first block read none). The wait above is on every
       * path: skipped in the first block, ptxas cannot prove P V retired before the rescale writes O and serializes
       * every wgmma (C7515) */
      if (kb > kb0 && attn_lead_) {
        KBD_ELECT_ONE { kbd_mbarrier_arrive_at(attn_vempty_ + 8u * vs); }
      }
#endif
      ATTN_P_TO_MMA(pt, pr, sc);
      /* O, which holds the blocks before j, moves to block j's max. On sm_90a only in a warp where any row's max
       * moved (a vote: the branch is warp-uniform, and no wgmma is in flight here, so writing O's registers under it
       * does not serialize the wgmmas); on sm_100a always, because kbd_acc_store ends with a warpgroup barrier that
       * every warp of the warpgroup must reach (an unchanged row's factor is exactly 1). In chunks of columns: on
       * sm_90a the chunk is registers of the accumulator itself (constant indices: KBD_ACC_UNROLL unrolls there), on
       * sm_100a a tcgen05.ld / st round trip of ATTN_OC columns */
      if (KBD_MMA_ARCH != 90 || kbd_softmax_warp_rescales(st)) {
        KBD_ACC_UNROLL
        for (int c = 0; c < ATTN_D; c += ATTN_OC) {
          KBD_ACC_TILE(f32, ATTN_WM, ATTN_OC) o;
          kbd_acc_load(o, oacc, c);
          kbd_softmax_rescale(o, st);
          kbd_acc_store(oacc, o, c);
        }
      }
      vs = ks, vph = kph; /* the next block's P V reads this block's V stage */
      ks = ks + 1u == ATTN_STAGES ? 0u : ks + 1u;
      kph ^= ks == 0u;
    }
    kbd_softmax_sum_rows(st); /* each row's per-lane sums, added once (kbd_softmax_update_lazy_part) */
    /* O += P V of the last block */
    if (kb0 < kb1) {
#if KBD_MMA_ARCH == 90
      ATTN_P_ROUND(pr, sc, sacc);
#endif
      const unsigned sp = vs; /* the last block's stage and phase */
      ATTN_V v = KBD_SMEM_PLAN_STILE(ATTN_V, smem, l.v, sp);
      kbd_mbarrier_wait(&vfull[sp], vph);
      ATTN_PV(oacc, pr, pt, v);
      kbd_mma_release(oacc, &vempty[sp]);
    }
    kbd_mma_wait(oacc);

    /* O / sum and the log-sum-exp, chunk by chunk. A row that saw no key (or a split with no key block) has sum 0:
     * O = 0, lse = -inf.
     * splits == 1: O in the input type goes out through the TMA (FlashAttention-3's epilogue: whole 128-byte lines
     * written by the async proxy instead of 64 masked 4-byte stores per thread, and the warps leave without waiting
     * for them). The staging tile is this warpgroup's Q tile: only S = Q K^T reads it, and kbd_mma_wait(oacc) above
     * was wgmma.wait_group 0 (sm_90a) / the wait for the commit that tracks every earlier tcgen05.mma of the issuing
     * thread (sm_100a), so no MMA of this warpgroup still reads Q; the barrier below orders every warp's wait before
     * any warp's first write (a wgmma is one operation of four warps: one warp's retirement does not order another
     * warp's stores). The converted chunks are stored into Q with stmatrix, fenced for the async proxy, and after a
     * second barrier one elected thread stores the 64 x head_dim tile with one kbd_tma_store3d: the tensor map's
     * extent (group * seq_q rows per (batch, kv head), attention_run.c) clips the rows past the end of the packed
     * rows, which are never written. splits > 1: the f32 partials keep their masked generic stores: a 64 x head_dim
     * f32 tile is twice the Q tile's bytes, so staging it would take chunks and a wait between them, for the
     * decode shapes whose few rows make this store a small share of the block's time. */
    const long long head0 = (long long)bh * rows; /* first packed row of this (batch, kv head) */
    const long long part = (long long)kbd_block_z() * kbd_grid_y() * rows + head0; /* splits > 1 */
    const kbd_scope me = g == 0 ? wg0 : wg1;
    const int leader = kbd_scope_warp(me) == 0;
    KBD_ROWVEC(f32, sc) lse;
    /* every warp's last wgmma retired before any warp writes Q (explicit: not left to the rendezvous of the last
     * P V's issue, which the CPU machine also accepts). Only where Q is written: p.splits is uniform over the block,
     * so all four warps take it or none. ptxas's allocation of the key loop depends on this line: with the barrier
     * taken on the split path too, attn_bf16_128's loop spilled 36 bytes after the main-loop round (748 instead of
     * 721 non-MMA per block); under the condition it is 0 and 721 (before that round the opposite held: 835 vs 828) */
    if (p.splits == 1) kbd_scope_sync(me);
    /* rolled: the body is compiled once (sm_90a: kbd_acc_load branches to the registers of chunk c) */
    KBD_NO_UNROLL
    for (int c = 0; c < ATTN_D; c += ATTN_OC) {
      KBD_ACC_TILE(f32, ATTN_WM, ATTN_OC) o;
      kbd_acc_load(o, oacc, c);
      kbd_softmax_finish(o, lse, st, p.scale);
      if (p.splits == 1) {
        KBD_ACC_TILE(ATTN_DT, ATTN_WM, ATTN_OC) ob;
        kbd_convert(ob, o);
        kbd_stile_store_at(q, ob, 0, c);
      } else {
        kbd_store2d(p.o_part + part * ATTN_D, o, rows, ATTN_D, ATTN_D, mr0, c);
      }
    }
    if (p.splits == 1) {
      kbd_fence_proxy_async(); /* this thread's stmatrix writes, before the TMA's async-proxy reads */
      kbd_scope_sync(me);
      if (leader && mr0 < rows) {
        KBD_ELECT_ONE {
          kbd_tma_store3d(&p.om, q, bh, mr0, 0);
          kbd_bulk_commit_group();
          kbd_bulk_wait_group_read(0); /* the store has read Q before its shared memory is released (the exit) */
        }
      }
      if (p.lse) kbd_vec_store_n(p.lse + head0 + mr0, lse, rows - mr0);
    } else {
      kbd_vec_store_n(p.lse_part + part + mr0, lse, rows - mr0);
    }
  }
  kbd_sync(); /* every Tensor Memory read is done before the columns are freed */
  if (kbd_warp_id() == 0) kbd_tmem_free(tmem, ATTN_TMEM_COLS);
#endif
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
#undef ATTN_P_TO_MMA
#undef ATTN_PV
#undef ATTN_KSTRIDE
#undef ATTN_VSTRIDE
#undef ATTN_P_ROUND
#undef ATTN_MASK
#undef ATTN_MASK_ROWS
