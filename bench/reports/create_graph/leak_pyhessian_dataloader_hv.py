# Source: https://github.com/amirgholami/PyHessian/blob/HEAD/pyhessian/hessian.py
# Report: audit of PyHessian's full-dataset Hessian-vector product (used for Hessian trace / top eigenvalue of CIFAR ResNets): each batch runs loss.backward(create_graph=True) and the repository clears the graph-carrying .grad with model.zero_grad() around it; this variant drops those resets
# Shape: per-batch loop inside a method; the double-backward grads stay in p.grad, so each batch's backward adds onto the previous graph-carrying grad (retain_graph=True in the Hv product keeps that chain usable), the parameter/grad cycle is never broken and the chain grows batch after batch
# Expect: TML013 line 39
import numpy as np
import torch


def group_product(xs, ys):
    return sum(torch.sum(x * y) for x, y in zip(xs, ys))


def get_params_grad(model):
    params, grads = [], []
    for param in model.parameters():
        if not param.requires_grad:
            continue
        params.append(param)
        grads.append(0.0 if param.grad is None else param.grad + 0.0)
    return params, grads


class Hessian:
    """Hutchinson trace of the loss Hessian over a whole data loader."""

    def __init__(self, model, criterion, dataloader, device="cuda"):
        self.model = model.eval()
        self.criterion = criterion
        self.data = dataloader
        self.device = device
        self.params = [p for p in model.parameters() if p.requires_grad]

    def dataloader_hv_product(self, v):
        num_data = 0.0
        THv = [torch.zeros_like(p) for p in self.params]
        for inputs, targets in self.data:
            outputs = self.model(inputs.to(self.device))
            loss = self.criterion(outputs, targets.to(self.device))
            loss.backward(create_graph=True)  # expect: TML013
            params, gradsH = get_params_grad(self.model)
            # retain_graph: without it the second batch fails ("backward through the graph a second time")
            Hv = torch.autograd.grad(gradsH, params, grad_outputs=v, only_inputs=True, retain_graph=True)
            THv = [THv1 + Hv1 * float(inputs.size(0)) + 0.0 for THv1, Hv1 in zip(THv, Hv)]
            num_data += float(inputs.size(0))
        THv = [THv1 / num_data for THv1 in THv]
        return group_product(THv, v).cpu().item(), THv

    def trace(self, max_iter=100, tol=1e-3):
        trace_vhv = []
        trace = 0.0
        for _ in range(max_iter):
            v = [torch.randint_like(p, high=2) for p in self.params]
            for v_i in v:
                v_i[v_i == 0] = -1
            _, Hv = self.dataloader_hv_product(v)
            trace_vhv.append(group_product(Hv, v).cpu().item())
            if abs(np.mean(trace_vhv) - trace) / (abs(trace) + 1e-6) < tol:
                return trace_vhv
            trace = np.mean(trace_vhv)
        return trace_vhv


def hessian_trace_report(model, loader, criterion=None):
    criterion = criterion or torch.nn.CrossEntropyLoss()
    comp = Hessian(model.cuda(), criterion, loader)
    traces = comp.trace(max_iter=50)
    print("Hessian trace: %.2f (%d Hutchinson samples)" % (np.mean(traces), len(traces)))
    return float(np.mean(traces))
