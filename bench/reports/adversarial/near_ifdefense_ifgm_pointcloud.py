# Source: https://github.com/Wuziyi616/IF-Defense/blob/3d439ef73fae9f1a30b12959987a2944edda1ecb/baselines/attack/FGM/FGM.py
# Report: audited idiom: the I-FGM point-cloud attack updates the perturbed cloud `pc` only under torch.no_grad()
# Shape: the loop-carried `pc = pc - perturbation` and the clip run inside `with torch.no_grad():`, and the next step re-marks pc as a fresh leaf
# Expect: near-miss: must be silent
import torch


class FGM:
    """Fast gradient method on [B, 3, K] point clouds."""

    def __init__(self, model, adv_func, budget, dist_metric='l2'):
        self.model = model.cuda()
        self.model.eval()
        self.adv_func = adv_func
        self.budget = budget
        self.dist_metric = dist_metric.lower()

    def get_norm(self, x):
        # global l2 norm over xyz and points
        return torch.sum(x ** 2, dim=[1, 2]) ** 0.5

    def get_gradient(self, data, target, normalize=True):
        data = data.float().cuda()
        data.requires_grad_()
        target = target.long().cuda()
        logits = self.model(data)
        if isinstance(logits, tuple):
            logits = logits[0]
        pred = torch.argmax(logits, dim=-1)
        loss = self.adv_func(logits, target).mean()
        loss.backward()
        with torch.no_grad():
            grad = data.grad.detach()
            if normalize:
                grad = grad / (self.get_norm(grad)[:, None, None] + 1e-9)
        return grad, pred


class IFGM(FGM):
    """Iterative FGM: many small l2-normalised steps, clipped to the budget."""

    def __init__(self, model, adv_func, clip_func, budget, step_size, num_iter,
                 dist_metric='l2'):
        super().__init__(model, adv_func, budget, dist_metric)
        self.clip_func = clip_func
        self.step_size = step_size
        self.num_iter = num_iter

    def attack(self, data, target):
        B, K = data.shape[:2]
        data = data.float().cuda().detach()
        pc = data.clone().detach().transpose(1, 2).contiguous()
        pc = pc + torch.randn((B, 3, K)).cuda() * 1e-7
        ori_pc = pc.clone().detach()
        target = target.long().cuda()

        for iteration in range(self.num_iter):
            normalized_grad, pred = self.get_gradient(pc, target)
            success_num = (pred == target).sum().item()
            if iteration % max(self.num_iter // 5, 1) == 0:
                print('iter {}/{}, success: {}/{}'.format(
                    iteration, self.num_iter, success_num, B))
            perturbation = self.step_size * normalized_grad

            # step and project back into the budget ball, outside autograd
            with torch.no_grad():
                pc = pc - perturbation
                pc = self.clip_func(pc, ori_pc)

        with torch.no_grad():
            logits = self.model(pc)
            if isinstance(logits, tuple):
                logits = logits[0]
            pred = torch.argmax(logits, dim=-1)
            success_num = (pred == target).sum().item()
        print('Final success: {}/{}'.format(success_num, B))
        return pc.transpose(1, 2).contiguous().detach().cpu().numpy(), success_num


class PGD(IFGM):
    """PGD = I-FGM started from a uniform random point inside the ball."""

    def attack(self, data, target):
        epsilon = self.budget / ((data.shape[1] * data.shape[2]) ** 0.5)
        init_perturbation = torch.empty_like(data).uniform_(-epsilon, epsilon)
        with torch.no_grad():
            init_data = data + init_perturbation
        return super().attack(init_data, target)
