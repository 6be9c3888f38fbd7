# Source: https://github.com/ikostrikov/pytorch-meta-optimizer/blob/0154d4d4fc856163885a62bac06174311aa58caf/meta_optimizer.py
# Report: one edit away from the real code: reset_lstm(keep_states=True) "copies" the hidden state with .clone() instead of cutting it (the original wrapped .data in a new Variable)
# Shape: clone() keeps the autograd history, so self.hx/self.cx carried by forward() stay linked across truncation windows; the next loss_sum.backward() walks into the freed graph of the previous window
# Expect: TML005 line 77
from functools import reduce
from operator import mul

import torch
import torch.nn as nn
import torch.nn.functional as F


def preprocess_gradients(x, p=10.0):
    log = torch.log(torch.abs(x) + 1e-8) / p
    return torch.stack([log.clamp(min=-1), torch.sign(x) * (log > -1).float()], dim=1)


class MetaModel:
    """Holds a copy of the optimizee whose parameters are replaced by graph tensors."""

    def __init__(self, model):
        self.model = model

    def reset(self):
        for module in self.model.children():
            module._parameters["weight"] = module._parameters["weight"].detach().requires_grad_()
            module._parameters["bias"] = module._parameters["bias"].detach().requires_grad_()

    def get_flat_params(self):
        return torch.cat([t.view(-1) for m in self.model.children() for t in (m._parameters["weight"], m._parameters["bias"])])

    def set_flat_params(self, flat_params):
        offset = 0
        for module in self.model.children():
            w_shape, b_shape = module._parameters["weight"].size(), module._parameters["bias"].size()
            w_n, b_n = reduce(mul, w_shape, 1), reduce(mul, b_shape, 1)
            module._parameters["weight"] = flat_params[offset:offset + w_n].view(*w_shape)
            module._parameters["bias"] = flat_params[offset + w_n:offset + w_n + b_n].view(*b_shape)
            offset += w_n + b_n

    def copy_params_from(self, model):
        for a, b in zip(self.model.parameters(), model.parameters()):
            a.data.copy_(b.data)

    def copy_params_to(self, model):
        for a, b in zip(self.model.children(), model.children()):
            b.weight.data.copy_(a._parameters["weight"].data)
            b.bias.data.copy_(a._parameters["bias"].data)


class MetaOptimizer(nn.Module):
    def __init__(self, meta_model, num_layers, hidden_size):
        super().__init__()
        self.meta_model = meta_model
        self.hidden_size = hidden_size
        self.linear1 = nn.Linear(3, hidden_size)
        self.lstms = nn.ModuleList([nn.LSTMCell(hidden_size, hidden_size) for _ in range(num_layers)])
        self.linear2 = nn.Linear(hidden_size, 1)

    def reset_lstm(self, keep_states=False, model=None, device="cuda"):
        self.meta_model.reset()
        self.meta_model.copy_params_from(model)
        if keep_states:
            for i in range(len(self.lstms)):
                self.hx[i] = self.hx[i].clone()
                self.cx[i] = self.cx[i].clone()
        else:
            self.hx = [torch.zeros(1, self.hidden_size, device=device) for _ in self.lstms]
            self.cx = [torch.zeros(1, self.hidden_size, device=device) for _ in self.lstms]

    def forward(self, x):
        x = torch.tanh(self.linear1(x))
        for i in range(len(self.lstms)):
            if x.size(0) != self.hx[i].size(0):
                self.hx[i] = self.hx[i].expand(x.size(0), self.hidden_size)
                self.cx[i] = self.cx[i].expand(x.size(0), self.hidden_size)
            self.hx[i], self.cx[i] = self.lstms[i](x, (self.hx[i], self.cx[i]))  # expect: TML005
            x = self.hx[i]
        return self.linear2(x).squeeze()

    def meta_update(self, model_with_grads):
        grads = torch.cat([p.grad.data.view(-1) for p in model_with_grads.parameters()])
        flat_params = self.meta_model.get_flat_params()
        inputs = torch.cat((preprocess_gradients(grads), flat_params.data.unsqueeze(1)), 1)
        flat_params = flat_params + self(inputs)
        self.meta_model.set_flat_params(flat_params)
        self.meta_model.copy_params_to(model_with_grads)
        return self.meta_model.model


def meta_train(make_model, get_batch, args):
    meta_optimizer = MetaOptimizer(MetaModel(make_model().cuda()), args.num_layers, args.hidden_size).cuda()
    optimizer = torch.optim.Adam(meta_optimizer.parameters(), lr=1e-3)
    for epoch in range(args.max_epoch):
        decrease_in_loss = 0.0
        for i in range(args.updates_per_epoch):
            model = make_model().cuda()
            x, y = get_batch(args.batch_size)
            initial_loss = F.mse_loss(model(x), y)

            for k in range(args.optimizer_steps // args.truncated_bptt_step):
                meta_optimizer.reset_lstm(keep_states=k > 0, model=model)
                loss_sum = 0
                for j in range(args.truncated_bptt_step):
                    x, y = get_batch(args.batch_size)
                    loss = F.mse_loss(model(x), y)
                    model.zero_grad()
                    loss.backward()

                    meta_model = meta_optimizer.meta_update(model)
                    loss = F.mse_loss(meta_model(x), y)
                    loss_sum += loss

                meta_optimizer.zero_grad()
                loss_sum.backward()
                for param in meta_optimizer.parameters():
                    param.grad.data.clamp_(-1, 1)
                optimizer.step()

            decrease_in_loss += loss.item() / initial_loss.item()
        print(f"Epoch {epoch}: final/initial loss ratio {decrease_in_loss / args.updates_per_epoch:.4f}")
