# Modelled on: https://github.com/pytorch/pytorch/issues/16744
# Report: "Memleak on backward with create_graph=True": memory grew even in a tiny loop.
import torch as T


def meta_step(model, support, query, meta_opt, inner_lr=0.01):
    for (xs, ys), (xq, yq) in zip(support, query):
        params = list(model.parameters())
        inner_loss = T.nn.functional.mse_loss(model(xs), ys)
        grads = T.autograd.grad(inner_loss, params, create_graph=True)
        for p, g in zip(params, grads):
            p.grad = g  # expect: TML013
        meta_opt.step()
