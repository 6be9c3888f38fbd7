# Source: https://github.com/yhhhli/BRECQ/issues/12
# Report: users ask why block reconstruction calls err.backward(retain_graph=True); the graph is only kept until the next step rebinds err (repo is correct)
# Shape: the repository's shape: retain_graph=True on the only backward, but err and out_quant are rebound next step and the history keeps err.item(), so no graph outlives the iteration
# Expect: near-miss: must be silent
import torch


def lp_loss(pred, tgt, p=2.0):
    return (pred - tgt).abs().pow(p).sum(1).mean()


class LinearTempDecay:
    def __init__(self, t_max, rel_start_decay=0.2, start_b=10, end_b=2):
        self.t_max = t_max
        self.start_decay = rel_start_decay * t_max
        self.start_b = start_b
        self.end_b = end_b

    def __call__(self, t):
        if t < self.start_decay:
            return self.start_b
        rel_t = (t - self.start_decay) / (self.t_max - self.start_decay)
        return self.end_b + (self.start_b - self.end_b) * max(0.0, 1 - rel_t)


class LossFunction:
    def __init__(self, block, weight=1.0, max_count=2000, b_range=(10, 2), warmup=0.0):
        self.block = block
        self.weight = weight
        self.loss_start = max_count * warmup
        self.temp_decay = LinearTempDecay(max_count, rel_start_decay=warmup,
                                          start_b=b_range[0], end_b=b_range[1])
        self.count = 0

    def __call__(self, pred, tgt):
        self.count += 1
        rec_loss = lp_loss(pred, tgt)
        b = self.temp_decay(self.count)
        if self.count < self.loss_start:
            round_loss = 0
        else:
            round_loss = 0
            for module in self.block.quant_modules():
                soft = module.weight_quantizer.get_soft_targets()
                round_loss += self.weight * (1 - ((soft - 0.5).abs() * 2).pow(b)).sum()
        total_loss = rec_loss + round_loss
        if self.count % 500 == 0:
            print("Total loss: {:.3f} (rec: {:.3f})".format(float(total_loss), float(rec_loss)))
        return total_loss


def block_reconstruction(block, cached_inps, cached_outs, batch_size=32, iters=20000,
                         weight=0.01, b_range=(20, 2), warmup=0.0):
    opt_params = [m.weight_quantizer.alpha for m in block.quant_modules()]
    optimizer = torch.optim.Adam(opt_params)
    loss_func = LossFunction(block, weight=weight, max_count=iters, b_range=b_range,
                             warmup=warmup)
    device = "cuda"
    rec_history = []
    for i in range(iters):
        idx = torch.randperm(cached_inps.size(0))[:batch_size]
        cur_inp = cached_inps[idx].to(device)
        cur_out = cached_outs[idx].to(device)

        optimizer.zero_grad()
        out_quant = block(cur_inp)
        err = loss_func(out_quant, cur_out)
        err.backward(retain_graph=True)
        rec_history.append(err.item())
        optimizer.step()

    torch.cuda.empty_cache()
    for m in block.quant_modules():
        m.weight_quantizer.soft_targets = False
    return rec_history
