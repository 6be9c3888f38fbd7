# Source: https://github.com/facebookresearch/higher/issues/75
# Report: backward hooks registered on the Linear layers of the patched fmodel inside higher.innerloop_ctx kept every fmodel copy alive; memory grew with each meta-step
# Shape: same adaptation helper, but every handle returned by register_full_backward_hook is kept and removed before the context closes, so nothing outlives the task
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import higher


def record_grad_scale(module, grad_input, grad_output):
    return None


def adapt_on_task(model, inner_opt, criterion, support, query, inner_steps=3):
    xs, ys = support
    xq, yq = query
    with higher.innerloop_ctx(model, inner_opt, copy_initial_weights=False) as (fmodel, diffopt):
        handles = []
        for module in fmodel.modules():
            if isinstance(module, nn.Linear):
                module.weight.requires_grad = True
                handles.append(module.register_full_backward_hook(record_grad_scale))
        try:
            for _ in range(inner_steps):
                support_loss = criterion(fmodel(xs), ys)
                diffopt.step(support_loss)
            query_loss = criterion(fmodel(xq), yq)
            query_loss.backward()
        finally:
            for handle in handles:
                handle.remove()
    return query_loss.item()


def meta_train(model, task_sampler, n_steps=10_000, device="cuda"):
    model.to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    inner_opt = torch.optim.SGD(model.parameters(), lr=1e-1)
    criterion = nn.MSELoss()
    running = []
    for step in range(n_steps):
        support, query = task_sampler(device)
        meta_opt.zero_grad()
        running.append(adapt_on_task(model, inner_opt, criterion, support, query))
        meta_opt.step()
        if step % 200 == 0:
            avg = sum(running[-200:]) / len(running[-200:])
            print(f"step {step:6d}  query mse {avg:.4f}")
    return running
