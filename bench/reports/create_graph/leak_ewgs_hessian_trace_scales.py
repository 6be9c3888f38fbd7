# Source: https://github.com/cvlab-yonsei/EWGS/issues/7
# Report: quantization-aware training with --use_hessian ran out of CUDA memory in update_grad_scales, which calls loss.backward(create_graph=True) on each batch to estimate the Hessian trace
# Shape: a helper run every few epochs does backward(create_graph=True) per batch, reads the graph-carrying .grad of the quantizer buffers for Hutchinson HVPs, and never resets .grad to None afterwards
# Expect: TML013 line 41
import numpy as np
import torch


def hessian_vector_product(grads, params, v):
    return torch.autograd.grad(grads, params, grad_outputs=v, only_inputs=True, retain_graph=True)


def hutchinson_trace(params, grads, max_iter=50, tol=1e-3):
    trace_vhv, trace = [], 0.0
    for _ in range(max_iter):
        v = [torch.randint_like(p, high=2) * 2 - 1 for p in params]
        hv = hessian_vector_product(grads, params, v)
        trace_vhv.append(sum((h * vi).sum() for h, vi in zip(hv, v)).cpu().item())
        if abs(np.mean(trace_vhv) - trace) / (trace + 1e-6) < tol:
            break
        trace = np.mean(trace_vhv)
    return trace_vhv


def quantizer_modules(model):
    return [m for m in model.modules() if hasattr(m, "bkwd_scaling_factor")]


def update_grad_scales(model, train_loader, criterion, device, num_batches=3):
    qmods = quantizer_modules(model)
    scales = [0.0 for _ in qmods]
    for m in qmods:
        m.hook_Qvalues = True
    model.train()
    for batch_idx, (images, labels) in enumerate(train_loader):
        if batch_idx == num_batches:
            break
        images, labels = images.to(device), labels.to(device)
        model.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward(create_graph=True)  # expect: TML013
        for i, m in enumerate(qmods):
            param, grad = m.buff_act, m.buff_act.grad
            avg_trace = np.mean(hutchinson_trace([param], [grad])) / param.numel()
            scales[i] += avg_trace / (grad.std().cpu().item() * 3.0)
    for i, m in enumerate(qmods):
        m.bkwd_scaling_factor.data.fill_(float(np.clip(scales[i] / num_batches, 0, np.inf)))
        m.hook_Qvalues = False


def train(model, train_loader, criterion, optimizer, epochs, device):
    for epoch in range(epochs):
        if epoch % 10 == 0 and epoch > 0:
            update_grad_scales(model, train_loader, criterion, device)
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(images.to(device)), labels.to(device))
            loss.backward()
            optimizer.step()
