# Source: https://github.com/vchoutas/smplx/issues/56
# Report: fitting body-model parameters batch after batch with a second-order optimizer grew GPU memory until OOM; fixed by setting p.grad = None after the fit
# Shape: same closure with backward(create_graph=True), but minimize() resets every p.grad to None once the fit ends, breaking the param <-> grad cycle
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm


def make_vertex_closure(body_model, var_dict, optimizer, gt_vertices, vertex_loss, create_graph=True):
    params_to_opt = [p for p in var_dict.values()]

    def closure(backward=True):
        if backward:
            optimizer.zero_grad()
        out = body_model(return_full_pose=True, **var_dict)
        loss = vertex_loss(out["vertices"], gt_vertices)
        if backward:
            if create_graph:
                loss.backward(create_graph=True)
            else:
                loss.backward()
        return loss

    return closure


def minimize(optimizer, closure, params, maxiters=100, ftol=1e-9):
    prev_loss = None
    for n in tqdm(range(maxiters), desc="fitting"):
        loss = optimizer.step(closure)
        cur = loss.item()
        if prev_loss is not None and abs(prev_loss - cur) / max(abs(prev_loss), 1.0) <= ftol:
            break
        prev_loss = cur
    # break the parameter <-> grad reference cycle created by create_graph=True
    for p in params:
        p.grad = None
    return prev_loss


def fit_sequence(body_model, loader, build_optimizer, vertex_loss, device="cuda"):
    results = []
    for batch in loader:
        gt_vertices = batch["vertices"].to(device)
        bs = gt_vertices.shape[0]
        var_dict = {
            "transl": torch.zeros(bs, 3, device=device, requires_grad=True),
            "global_orient": torch.zeros(bs, 1, 3, device=device, requires_grad=True),
            "body_pose": torch.zeros(bs, 21, 3, device=device, requires_grad=True),
            "betas": torch.zeros(bs, 10, device=device, requires_grad=True),
        }
        optimizer = build_optimizer(list(var_dict.values()))
        closure = make_vertex_closure(body_model, var_dict, optimizer, gt_vertices, vertex_loss)
        final = minimize(optimizer, closure, list(var_dict.values()))
        results.append({k: v.detach().cpu() for k, v in var_dict.items()})
        print(f"batch fitted, loss={final:.5f}")
    return results
