# Source: https://github.com/Zhaoyi-Yan/Shift-Net_pytorch/blob/HEAD/models/shift_net/InnerShiftTripleFunction.py
# Report: audit of Shift-Net's shift-connection layer (image inpainting): the custom autograd Function keeps the mask flag and the (bz, h*w, h*w) shift index matrix as plain ctx attributes (ctx.flag, ctx.ind_lst) instead of ctx.save_for_backward
# Shape: forward of a torch.autograd.Function builds the index tensor on the GPU and stores it, and the moved flag tensor, as ctx attributes; scalars (triple_w, bz, h, w) are also on ctx; a small inpainting loop drives it
# Expect: TML018 line 19; TML018 line 32
import torch
import torch.nn as nn
import torch.nn.functional as F


class InnerShiftTripleFunction(torch.autograd.Function):
    """Pastes, into the masked positions, the most similar known encoder features."""

    @staticmethod
    def forward(ctx, input, flag, triple_w):
        bz, c, h, w = input.size()
        ctx.triple_w = triple_w
        ctx.bz, ctx.h, ctx.w = bz, h, w
        flag = flag.to(input.device)
        ctx.flag = flag  # expect: TML018
        former_all, latter_all = input.split(c // 2, dim=1)
        masked = flag.nonzero(as_tuple=True)[0]
        known = (flag == 0).nonzero(as_tuple=True)[0]
        ind_lst = torch.zeros(bz, h * w, h * w, dtype=torch.long, device=input.device)
        shifted = torch.zeros_like(latter_all)
        for idx in range(bz):
            former = former_all[idx].reshape(c // 2, -1)
            latter = latter_all[idx].reshape(c // 2, -1)
            cosine = F.normalize(former[:, masked], dim=0).t() @ F.normalize(latter[:, known], dim=0)
            best = known[cosine.argmax(dim=1)]
            shifted[idx].view(c // 2, -1)[:, masked] = latter[:, best]
            ind_lst[idx, masked, best] = 1
        ctx.ind_lst = ind_lst  # expect: TML018
        return torch.cat((former_all, latter_all, shifted), dim=1)

    @staticmethod
    def backward(ctx, grad_output):
        c = grad_output.size(1) // 3
        grad_former = grad_output[:, :c]
        grad_latter = grad_output[:, c:2 * c].clone()
        grad_shift = grad_output[:, 2 * c:].reshape(ctx.bz, c, -1)
        for idx in range(ctx.bz):
            routed = grad_shift[idx] @ ctx.ind_lst[idx].to(grad_shift.dtype)
            grad_latter[idx] += routed.view(c, ctx.h, ctx.w) * ctx.triple_w
        return torch.cat((grad_former, grad_latter), dim=1), None, None


class InnerShiftTriple(nn.Module):
    def __init__(self, triple_w=1.0, layer_to_last=3):
        super().__init__()
        self.triple_w = triple_w
        self.layer_to_last = layer_to_last
        self.flag = None

    def set_mask(self, mask_global):
        scale = 2 ** self.layer_to_last
        feat_mask = F.max_pool2d(mask_global.float(), kernel_size=scale, stride=scale)
        self.flag = (feat_mask[0, 0].reshape(-1) > 0.5).long()

    def forward(self, x):
        return InnerShiftTripleFunction.apply(x, self.flag, self.triple_w)


def train_inpainting(netG, shift_layer, loader, epochs=30, lr=2e-4, device="cuda"):
    optimizer = torch.optim.Adam(netG.parameters(), lr=lr, betas=(0.5, 0.999))
    for epoch in range(epochs):
        running = 0.0
        for real, mask in loader:
            real, mask = real.to(device), mask.to(device)
            shift_layer.set_mask(mask)
            fake = netG(real * (1 - mask))
            loss = F.l1_loss(fake, real) * 100
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(epoch, running / len(loader))
