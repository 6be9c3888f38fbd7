# Source: https://github.com/hahnyuan/PTQ4ViT/blob/07a75dcd84e07adae2997b0cc31dd8e6abf6e9c2/utils/quant_calib.py
# Report: the BRECQ calibration with the forward hook written like a plain activation grabber (no .cpu().detach()), while the calibration loop runs with grad enabled because it backpropagates a KL loss
# Shape: the hook appends the attached GPU input[0] and output to lists on the wrapped module, which lives for the whole calibration, so every calibration batch's activations (and their graph nodes) stay on the GPU until the torch.cat after the loop
# Expect: TML001 lines 30, 31
import torch
import torch.nn as nn
import torch.nn.functional as F


class MinMaxQuantLinear(nn.Linear):
    def __init__(self, in_features, out_features, metric="brecq"):
        super().__init__(in_features, out_features)
        self.metric = metric
        self.mode = "raw"
        self.raw_input = None
        self.raw_out = None
        self.raw_grad = None

    def calibration_step2(self, x):
        # searches weight/activation scales against raw_out weighted by raw_grad (omitted)
        self.calibrated = True
        self.raw_input = self.raw_out = self.raw_grad = None


def linear_forward_hook(module, input, output):
    if module.raw_input is None:
        module.raw_input = []
    if module.raw_out is None:
        module.raw_out = []
    module.raw_input.append(input[0])  # expect: TML001
    module.raw_out.append(output)  # expect: TML001


def grad_hook(module, grad_input, grad_output):
    if module.raw_grad is None:
        module.raw_grad = []
    module.raw_grad.append(grad_output[0].cpu().detach())


class BrecqQuantCalibrator:
    def __init__(self, net, wrapped_modules, calib_loader, batch_size=1):
        self.net = net
        self.wrapped_modules = wrapped_modules
        self.calib_loader = calib_loader
        self.batch_size = batch_size

    def quant_calib(self):
        with torch.no_grad():
            for inp, _ in self.calib_loader:
                raw_pred = self.net(inp.cuda())
                raw_pred_softmax = F.softmax(raw_pred, dim=-1).detach()

        for name, module in self.wrapped_modules.items():
            hooks = []
            hooks.append(module.register_forward_hook(linear_forward_hook))
            if module.metric == "brecq":
                hooks.append(module.register_full_backward_hook(grad_hook))

            for inp, target in self.calib_loader:
                for batch_st in range(0, self.calib_loader.batch_size, self.batch_size):
                    self.net.zero_grad()
                    inp_ = inp[batch_st:batch_st + self.batch_size].cuda()
                    pred = self.net(inp_)
                    loss = F.kl_div(F.log_softmax(pred, dim=-1),
                                    raw_pred_softmax[batch_st:batch_st + self.batch_size], reduction="batchmean")
                    loss.backward()

            module.raw_input = torch.cat(module.raw_input, dim=0)
            module.raw_out = torch.cat(module.raw_out, dim=0)
            if module.metric == "brecq":
                module.raw_grad = torch.cat(module.raw_grad, dim=0)
            for hook in hooks:
                hook.remove()

            with torch.no_grad():
                module.calibration_step2(module.raw_input.cuda())
            module.mode = "raw"

        for name, module in self.wrapped_modules.items():
            module.mode = "quant_forward"
