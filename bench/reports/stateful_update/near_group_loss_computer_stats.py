# Source: https://github.com/anniesch/jtt/issues/10
# Report: training (not validation) leaked ~180 KB per batch, traced to a tensor kept by the loss/stats logger; the per-group loss computer keeps running averages of attached losses on self
# Shape: same LossComputer, but the historical average takes group_loss.detach() and update_stats runs under @torch.no_grad(), so the running values on self never join the graph
# Expect: near-miss: must be silent
import torch


class GroupLossComputer:
    def __init__(self, criterion, n_groups, gamma=0.1, device="cuda"):
        self.criterion = criterion  # reduction="none"
        self.n_groups = n_groups
        self.gamma = gamma
        self.device = device
        self.exp_avg_loss = torch.zeros(n_groups, device=device)
        self.exp_avg_initialized = torch.zeros(n_groups, device=device)
        self.reset_stats()

    def reset_stats(self):
        self.processed = torch.zeros(self.n_groups, device=self.device)
        self.avg_group_loss = torch.zeros(self.n_groups, device=self.device)
        self.avg_actual_loss = 0.0
        self.batch_count = 0

    def loss(self, logits, y, group_idx):
        per_sample = self.criterion(logits, y)
        group_loss, group_count = self.group_average(per_sample, group_idx)
        self.update_exp_avg_loss(group_loss, group_count)
        actual_loss = per_sample.mean()
        self.update_stats(actual_loss, group_loss, group_count)
        return actual_loss

    def group_average(self, values, group_idx):
        groups = torch.arange(self.n_groups, device=values.device).unsqueeze(1)
        group_map = (group_idx == groups).float()
        group_count = group_map.sum(1)
        denom = group_count + (group_count == 0).float()
        return (group_map @ values.view(-1)) / denom, group_count

    def update_exp_avg_loss(self, group_loss, group_count):
        seen = (self.exp_avg_initialized > 0).float()
        prev_w = (1 - self.gamma * (group_count > 0).float()) * seen
        self.exp_avg_loss = self.exp_avg_loss * prev_w + group_loss.detach() * (1 - prev_w)
        self.exp_avg_initialized = ((self.exp_avg_initialized > 0) | (group_count > 0)).float()

    @torch.no_grad()
    def update_stats(self, actual_loss, group_loss, group_count):
        denom = self.processed + group_count
        denom = denom + (denom == 0).float()
        prev_w = self.processed / denom
        curr_w = group_count / denom
        self.avg_group_loss = prev_w * self.avg_group_loss + curr_w * group_loss
        n = self.batch_count
        self.avg_actual_loss = (n / (n + 1)) * self.avg_actual_loss + actual_loss / (n + 1)
        self.processed += group_count
        self.batch_count += 1


def run_epoch(model, loader, optimizer, loss_computer, log_every=50):
    model.train()
    loss_computer.reset_stats()
    for step, (x, y, g) in enumerate(loader):
        x, y, g = x.cuda(), y.cuda(), g.cuda()
        loss = loss_computer.loss(model(x), y, g)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (step + 1) % log_every == 0:
            print(f"step {step + 1}: avg loss {float(loss_computer.avg_actual_loss):.4f}")
