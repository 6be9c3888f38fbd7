# Source: https://github.com/luyug/GradCache/blob/6b3291ac2cdd28fc43a9a65cae63aed8c2d0551e/src/grad_cache/grad_cache.py
# Report: GradCache (dense-retriever contrastive training) runs its first, representation-only pass under torch.no_grad() so only one sub-batch graph is alive at a time; this is the audited correct idiom
# Shape: counterfactual of forward_no_grad with the no_grad context dropped: every sub-batch's graph-attached representation is appended to model_reps, which outlives the chunk loop, so all chunk activations are alive at once (the OOM GradCache exists to avoid)
# Expect: TML001 line 47
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.cuda.amp import autocast


class GradCache:
    def __init__(self, models, chunk_sizes, loss_fn, get_rep_fn=None, fp16=False, scaler=None):
        self.models = models
        if isinstance(chunk_sizes, int):
            chunk_sizes = [chunk_sizes] * len(models)
        self.chunk_sizes = chunk_sizes
        self.loss_fn = loss_fn
        self.get_rep_fn = get_rep_fn
        self.fp16 = fp16
        self.scaler = scaler

    def __call__(self, *args, **kwargs):
        return self.cache_step(*args, **kwargs)

    def split_inputs(self, model_input, chunk_size):
        keys = list(model_input.keys())
        chunked = [model_input[k].split(chunk_size, dim=0) for k in keys]
        return [dict(zip(keys, vals)) for vals in zip(*chunked)]

    def model_call(self, model, model_input):
        with autocast() if self.fp16 else nullcontext():
            return model(**model_input)

    def get_reps(self, model_out):
        if self.get_rep_fn is not None:
            return self.get_rep_fn(model_out)
        return model_out

    def forward_no_grad(self, model, model_inputs):
        rnd_states = []
        model_reps = []
        for x in model_inputs:
            rnd_states.append(torch.cuda.get_rng_state())
            y = self.model_call(model, x)
            model_reps.append(self.get_reps(y))  # expect: TML001
        model_reps = torch.cat(model_reps, dim=0)
        return model_reps, rnd_states

    def build_cache(self, *reps, **loss_kwargs):
        reps = [r.detach().requires_grad_() for r in reps]
        loss = self.loss_fn(*reps, **loss_kwargs)
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        cache = [r.grad for r in reps]
        return cache, loss.detach()

    def forward_backward(self, model, model_inputs, cached_gradients, random_states):
        for x, state, gradient in zip(model_inputs, random_states, cached_gradients):
            torch.cuda.set_rng_state(state)
            reps = self.get_reps(self.model_call(model, x))
            with autocast(False):
                surrogate = torch.dot(reps.float().flatten(), gradient.float().flatten())
            surrogate.backward()

    def cache_step(self, *model_inputs, **loss_kwargs):
        all_reps, all_rnd_states = [], []
        model_inputs = [self.split_inputs(x, c) for x, c in zip(model_inputs, self.chunk_sizes)]
        for model, x in zip(self.models, model_inputs):
            model_reps, rnd_states = self.forward_no_grad(model, x)
            all_reps.append(model_reps)
            all_rnd_states.append(rnd_states)
        cache, loss = self.build_cache(*all_reps, **loss_kwargs)
        cache = [c.split(cs) for c, cs in zip(cache, self.chunk_sizes)]
        for model, x, model_cache, rnd in zip(self.models, model_inputs, cache, all_rnd_states):
            self.forward_backward(model, x, model_cache, rnd)
        return loss


def contrastive_loss(q_reps, p_reps, temperature=0.05):
    scores = q_reps @ p_reps.t() / temperature
    target = torch.arange(scores.size(0), device=scores.device)
    return F.cross_entropy(scores, target)


def train_dpr(q_encoder, p_encoder, loader, optimizer, epochs=1):
    gc = GradCache([q_encoder, p_encoder], chunk_sizes=16, loss_fn=contrastive_loss,
                   get_rep_fn=lambda out: out.pooler_output)
    for epoch in range(epochs):
        running = 0.0
        for step, (queries, passages) in enumerate(loader):
            optimizer.zero_grad()
            loss = gc(queries, passages)
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch} loss {running / max(1, step + 1):.4f}")
