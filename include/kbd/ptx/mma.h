/* kbd/ptx/mma.h - warpgroup MMA instructions (GPU twin of cpu/mma.h; docs/design/mma.md, "The hardware twins").
 * One job a file, as on the CPU side: mma_operand.h (target guards, shared addresses), mma_wgmma.h (sm_90a),
 * tmem_alloc.h, mma_umma.h, tmem_ldst.h (sm_100a); this file includes them in that order.
 *
 * sm_90a: wgmma.mma_async with shared-memory descriptors for A and B and the accumulator in the registers of
 * the issuing warpgroup (ptx-reference §4). sm_100a: tcgen05.mma issued by one thread into Tensor Memory, its
 * allocation, commit to an mbarrier, and tcgen05.ld/st between TMEM and registers (§5).
 *
 * The instruction spells its type, shape (N), negation (imm-scale) and transposition (imm-trans) as
 * immediates, which inline asm cannot take from a function argument ("n" needs a constant expression before
 * inlining). kbd_hw_wgmma decodes `kind` and the tcgen05-style `idesc` (kbd/mma_desc.h): a C switch picks
 * the type family and N (one asm statement each: its operand list fixes the register count), and inside that
 * statement the negate / transpose / type-pair variants are PTX instructions under predicates on a selector
 * register. At a kbd call site kind and idesc are constants: the C switches fold while inlining and ptxas
 * folds the predicates, leaving one HGMMA (tests/ptx/mma.check proves both on PTX and SASS). kbd_mma itself
 * calls the function kbd_hw_wgmma_fn names from the call site's constants instead: one unguarded statement of
 * the family, variant and N (cicc and ptxas then see one wgmma per K-step). The operand lists (up to 128
 * accumulator registers in one statement) come from the generated ptx/mma_regs.h.
 *
 * Targets: wgmma only exists on sm_90a and tcgen05 only on sm_100a (ptxas rejects each on the other). A
 * device pass for another target compiles these twins, but a call that survives into its code makes ptxas
 * stop with "Unresolved extern function 'kbd_ptx_wgmma_requires_sm_90a'" (or ..._tcgen05_requires_sm_100a);
 * nvcc's host pass only parses them. kbd/mma.h calls each family only on its own target.
 */
#ifndef KBD_PTX_MMA_H
#define KBD_PTX_MMA_H

#include "../config.h"
#include "../mma_desc.h"
#include "mbar.h"
#include "mma_regs.h"

#include "mma_operand.h"
#include "mma_umma.h"
#include "mma_wgmma.h"
#include "tmem_alloc.h"
#include "tmem_ldst.h"

#endif /* KBD_PTX_MMA_H */
