# Source: https://github.com/hieule88/SpeechSeparation/blob/243479c75766a8bfd081c9c26142d8f2a0b724c9/main/train.py
# Report: audited idiom in a SpeechBrain SepFormer separation recipe (the repository also has a merged PR #5 titled "fix CUDA OOM", diff not checked): fit_batch() returns loss.detach().cpu() and a module-global train_losses list is kept for plotting; this rewrite returns the raw loss
# Shape: fit_batch() returns the graph-attached SI-SNR loss; the epoch loop appends it to the module-global train_losses list used for the loss plot, so every batch's loss tensor and its autograd history survive for the whole run
# Expect: TML001 line 68
import os

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

train_losses = []
valid_losses = []


class Separation:
    def __init__(self, modules, hparams, optimizer, device="cuda"):
        self.modules = modules
        self.hparams = hparams
        self.optimizer = optimizer
        self.device = device
        self.nonfinite_count = 0

    def compute_forward(self, mix, targets):
        mix = mix.to(self.device)
        targets = torch.cat([t.unsqueeze(-1) for t in targets], dim=-1).to(self.device)
        mix_w = self.hparams.Encoder(mix)
        est_mask = self.hparams.MaskNet(mix_w)
        mix_w = torch.stack([mix_w] * self.hparams.num_spks)
        sep_h = mix_w * est_mask
        est_source = torch.cat(
            [self.hparams.Decoder(sep_h[i]).unsqueeze(-1) for i in range(self.hparams.num_spks)],
            dim=-1,
        )
        T_origin, T_est = mix.size(1), est_source.size(1)
        if T_origin > T_est:
            est_source = F.pad(est_source, (0, 0, 0, T_origin - T_est))
        else:
            est_source = est_source[:, :T_origin, :]
        return est_source, targets

    def compute_objectives(self, predictions, targets):
        return self.hparams.loss(targets, predictions)

    def fit_batch(self, batch):
        targets = [batch.s1_sig, batch.s2_sig]
        predictions, targets = self.compute_forward(batch.mix_sig, targets)
        loss = self.compute_objectives(predictions, targets).mean()
        if loss < self.hparams.loss_upper_lim and loss.nelement() > 0:
            loss.backward()
            if self.hparams.clip_grad_norm >= 0:
                torch.nn.utils.clip_grad_norm_(self.modules.parameters(), self.hparams.clip_grad_norm)
            self.optimizer.step()
        else:
            self.nonfinite_count += 1
        self.optimizer.zero_grad()
        return loss

    def plot_losses(self, epoch):
        plt.plot(train_losses)
        plt.plot(valid_losses)
        plt.savefig(os.path.join(self.hparams.save_folder, "log", "epoch%d.png" % epoch), dpi=150)

    def fit(self, epoch_counter, train_set):
        for epoch in epoch_counter:
            self.modules.train()
            for step, batch in enumerate(train_set, 1):
                loss = self.fit_batch(batch)
                train_losses.append(loss)  # expect: TML001
            if epoch % 5 == 0:
                self.plot_losses(epoch)
