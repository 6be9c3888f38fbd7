# Source: https://github.com/pytti-tools/pytti-core/pull/108
# Report: image-guide training called backward(retain_graph=True) on every gradient-accumulation micro-batch, including the last one, so the shared augmentation/image-loss graph stayed alive after the final backward (PR: retain only before the last step)
# Shape: the last (only) backward of each micro-batch iteration retains the graph while aug_losses / image_losses built before the loop outlive it
# Expect: TML006 line 39
import pandas as pd
import torch


def unpack_dict(d):
    return {str(k): v[0] for k, v in d.items()}, {str(k): v[1] for k, v in d.items()}


class ImageGuide:
    def __init__(self, image_rep, embedder, optimizer):
        self.image_rep = image_rep
        self.embedder = embedder
        self.optimizer = optimizer
        self.dataframe = []

    def train_step(self, i, prompts, loss_augs, grad_accum_steps=1, save_loss=True):
        z = self.image_rep.decode_training_tensor()
        aug_losses = {aug: aug(z, self.image_rep) for aug in loss_augs}
        image_losses = {aug: aug(self.image_rep) for aug in self.image_rep.image_loss()}

        losses, losses_raw = [], []
        for mb_i in range(grad_accum_steps):
            prompt_losses = {}
            if self.embedder is not None:
                embeds, offsets, sizes = self.embedder(self.image_rep, input=z)
                prompt_losses = {p: p(embeds, offsets, sizes) for p in prompts}

            losses, losses_raw = zip(
                *map(unpack_dict, [prompt_losses, aug_losses, image_losses])
            )
            losses, losses_raw = list(losses), list(losses_raw)

            total_mb = sum(sum(d.values()) for d in losses)
            total_mb = total_mb / grad_accum_steps
            total_mb.backward(retain_graph=True)  # expect: TML006

        self.optimizer.step()
        self.image_rep.update()
        self.optimizer.zero_grad()

        if save_loss:
            rows = [
                pd.DataFrame({k: float(v) for k, v in raw.items()}, index=[i])
                for raw in losses_raw
            ]
            self.dataframe = rows if not self.dataframe else [
                pd.concat([df, row]) for df, row in zip(self.dataframe, rows)
            ]
        return {"TOTAL": float(sum(float(v) for d in losses for v in d.values()))}

    def run_steps(self, n_steps, prompts, loss_augs, grad_accum_steps=4):
        for i in range(n_steps):
            self.train_step(i, prompts, loss_augs, grad_accum_steps)
