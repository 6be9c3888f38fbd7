# Source: https://github.com/yulinzhouZYL/MTIL/issues/1
# Report: issue quotes MTIL's manual-optimization LightningModule: training_step carries self.hiddens from policy.step() across the batches of a trajectory and detaches them each chunk; here the detach is left out
# Shape: pred_action, self.hiddens = self.policy.step(..., self.hiddens) feeds the previous step's recurrent state back in; without detach every step's graph hangs off self.hiddens until the trajectory ends (validation_step runs under Lightning's no_grad)
# Expect: TML005 line 63
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentPolicy(nn.Module):
    """Image + proprioception encoder feeding a stack of recurrent blocks; one call = one time step."""

    def __init__(self, embed_dim, lowdim_dim, d_model, action_dim, num_blocks, future_steps):
        super().__init__()
        self.vision = nn.Sequential(nn.Conv2d(3, 32, 5, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                    nn.Linear(32, embed_dim))
        self.lowdim = nn.Linear(lowdim_dim, embed_dim)
        self.blocks = nn.ModuleList([nn.LSTMCell(embed_dim if i == 0 else d_model, d_model) for i in range(num_blocks)])
        self.head = nn.Linear(d_model, action_dim * future_steps)
        self.action_dim, self.future_steps = action_dim, future_steps

    def init_hidden_states(self, batch_size, device):
        return [(torch.zeros(batch_size, blk.hidden_size, device=device),
                 torch.zeros(batch_size, blk.hidden_size, device=device)) for blk in self.blocks]

    def step(self, lowdim, rgb, hiddens):
        x = self.vision(rgb['top']) + self.lowdim(lowdim)
        new_hiddens = []
        for blk, (c, s) in zip(self.blocks, hiddens):
            s, c = blk(x, (s, c))
            new_hiddens.append((c, s))
            x = s
        return self.head(x).view(-1, self.future_steps, self.action_dim), new_hiddens


class LitRecurrentModel(pl.LightningModule):
    def __init__(self, policy: RecurrentPolicy):
        super().__init__()
        self.policy = policy
        self.prev_traj_idx = -1
        self.train_sequence_loss = 0.0
        self.val_sequence_loss = 0.0
        self.automatic_optimization = False  # one optimizer step per trajectory

    def training_step(self, batch, batch_idx):
        optimizer = self.optimizers()
        rgb, lowdim, actions = batch['rgb'], batch['lowdim'], batch['actions']
        traj_idx = batch['traj_idx'].item()

        if traj_idx != self.prev_traj_idx and self.prev_traj_idx != -1:
            torch.nn.utils.clip_grad_norm_(self.policy.parameters(), max_norm=1.0)
            optimizer.step()
            optimizer.zero_grad()
            self.log("train_loss", self.train_sequence_loss, prog_bar=True, batch_size=1)
            self.train_sequence_loss = 0.0
            self.hiddens = self.policy.init_hidden_states(batch_size=1, device=self.device)
            self.prev_traj_idx = traj_idx
        elif self.prev_traj_idx == -1:
            self.hiddens = self.policy.init_hidden_states(batch_size=1, device=self.device)
            self.prev_traj_idx = traj_idx

        pred_action, self.hiddens = self.policy.step(lowdim, rgb, self.hiddens)  # expect: TML005
        loss = F.mse_loss(pred_action, actions)
        self.manual_backward(loss)
        self.train_sequence_loss += loss.item()
        return loss

    def validation_step(self, batch, batch_idx):
        rgb, lowdim, actions = batch['rgb'], batch['lowdim'], batch['actions']
        traj_idx = batch['traj_idx'].item()
        if traj_idx != self.prev_traj_idx:
            if self.prev_traj_idx != -1 and self.val_sequence_loss > 0.0:
                self.log("val_loss", self.val_sequence_loss, prog_bar=True, batch_size=1)
                self.val_sequence_loss = 0.0
            self.hiddens = self.policy.init_hidden_states(batch_size=1, device=self.device)
            self.prev_traj_idx = traj_idx

        pred_action, self.hiddens = self.policy.step(lowdim, rgb, self.hiddens)
        loss = F.mse_loss(pred_action, actions)
        self.val_sequence_loss += loss.item()
        return loss

    def on_train_epoch_end(self):
        optimizer = self.optimizers()
        if self.train_sequence_loss > 0.0:
            torch.nn.utils.clip_grad_norm_(self.policy.parameters(), max_norm=1.0)
            optimizer.step()
            optimizer.zero_grad()
            self.log("train_loss", self.train_sequence_loss, prog_bar=True, batch_size=1)
            self.train_sequence_loss = 0.0

    def configure_optimizers(self):
        return torch.optim.AdamW(self.policy.parameters(), lr=2e-4, weight_decay=5e-4)
