# Source: https://github.com/GMvandeVen/continual-learning/blob/f0392767d9fddec669bee8c11577d115e30c2cad/train/train_task_based.py
# Report: the original ContinualLearner.update_importance_estimates (Synaptic Intelligence), which detaches p before forming the path-integral term
# Shape: W[n] still accumulates in place every step, but from -p.grad * (p.detach() - p_old[n]), which carries no graph
# Expect: near-miss: must be silent

import abc
import torch
from torch import nn
import tqdm
from utils import get_data_loader


class ContinualLearner(nn.Module, metaclass=abc.ABCMeta):
    '''Abstract module to add continual learning capabilities (here: Synaptic Intelligence).'''

    def __init__(self):
        super().__init__()
        self.importance_weighting = 'si'
        self.weight_penalty = True
        self.epsilon = 0.1
        self.reg_strength = 1.
        self.param_list = [self.named_parameters]

    def register_starting_param_values(self):
        for gen_params in self.param_list:
            for n, p in gen_params():
                if p.requires_grad:
                    n = n.replace('.', '__')
                    self.register_buffer('{}_SI_prev_context'.format(n), p.detach().clone())

    def prepare_importance_estimates_dicts(self):
        W = {}
        p_old = {}
        for gen_params in self.param_list:
            for n, p in gen_params():
                if p.requires_grad:
                    n = n.replace('.', '__')
                    W[n] = p.data.clone().zero_()
                    p_old[n] = p.data.clone()
        return W, p_old

    def update_importance_estimates(self, W, p_old):
        '''Update the running parameter importance estimates in W.'''
        for gen_params in self.param_list:
            for n, p in gen_params():
                if p.requires_grad:
                    n = n.replace('.', '__')
                    if p.grad is not None:
                        W[n].add_(-p.grad * (p.detach() - p_old[n]))
                    p_old[n] = p.detach().clone()

    def update_omega(self, W, epsilon):
        for gen_params in self.param_list:
            for n, p in gen_params():
                if p.requires_grad:
                    n = n.replace('.', '__')
                    p_prev = getattr(self, '{}_SI_prev_context'.format(n))
                    p_current = p.detach().clone()
                    p_change = p_current - p_prev
                    omega_add = W[n] / (p_change ** 2 + epsilon)
                    try:
                        omega = getattr(self, '{}_SI_omega'.format(n))
                    except AttributeError:
                        omega = p.detach().clone().zero_()
                    self.register_buffer('{}_SI_prev_context'.format(n), p_current)
                    self.register_buffer('{}_SI_omega'.format(n), omega + omega_add)


def train_cl(model, train_datasets, iters=2000, batch_size=32, loss_cbs=list(), **kwargs):
    model.train()
    cuda = model._is_on_cuda()
    device = model._device()
    model.register_starting_param_values()

    for context, train_dataset in enumerate(train_datasets, 1):
        W, p_old = model.prepare_importance_estimates_dicts()
        iters_left = 1
        progress = tqdm.tqdm(range(1, iters + 1))

        for batch_index in range(1, iters + 1):
            iters_left -= 1
            if iters_left == 0:
                data_loader = iter(get_data_loader(train_dataset, batch_size, cuda=cuda, drop_last=True))
                iters_left = len(data_loader)
            x, y = next(data_loader)
            x, y = x.to(device), y.to(device)

            loss_dict = model.train_a_batch(x, y, rnt=1. / context, context=context)

            # Update running parameter importance estimates in W (needed for SI)
            model.update_importance_estimates(W, p_old)

            for loss_cb in loss_cbs:
                if loss_cb is not None:
                    loss_cb(progress, batch_index, loss_dict, context=context)

        progress.close()
        if context < len(train_datasets) and model.weight_penalty:
            model.update_omega(W, model.epsilon)
