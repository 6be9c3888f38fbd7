# Source: https://github.com/haoxiangsnr/IRM-based-Speech-Enhancement-using-LSTM/blob/715ed16d248881fdabad55ccd9af63dd55fe378c/trainer/trainer.py
# Report: the IRM speech-enhancement Trainer._train_epoch sums the raw loss tensor into loss_total (`loss_total += loss`) and only logs it at the end of the epoch
# Shape: loss_total starts as 0.0 and outlives the batch loop; adding the graph-attached loss turns it into a tensor whose AddBackward chain references every step's loss node for the whole epoch
# Expect: TML001 line 49
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter


class BaseTrainer:
    def __init__(self, config, model, optimizer, loss_function):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.optimizer = optimizer
        self.loss_function = loss_function
        self.epochs = config["epochs"]
        self.writer = SummaryWriter(config["log_dir"])

    def train(self):
        best = -np.inf
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            self._train_epoch(epoch)
            self.model.eval()
            score = self._validation_epoch(epoch)
            if score > best:
                best = score
                torch.save(self.model.state_dict(), "best_model.tar")


class MaskTrainer(BaseTrainer):
    def __init__(self, config, model, optimizer, loss_function, train_dl, valid_dl):
        super().__init__(config, model, optimizer, loss_function)
        self.train_dataloader = train_dl
        self.validation_dataloader = valid_dl

    def _train_epoch(self, epoch):
        loss_total = 0.0

        for noisy_mag, _, mask, n_frames_list in self.train_dataloader:
            self.optimizer.zero_grad()

            noisy_mag = noisy_mag.to(self.device)
            mask = mask.to(self.device)

            pred_mask = self.model(noisy_mag)
            # masked MSE over the valid frames of each utterance
            loss = self.loss_function(pred_mask, mask, n_frames_list)
            loss_total += loss  # expect: TML001

            loss.backward()
            self.optimizer.step()

        self.writer.add_scalar("Loss/Train", loss_total / len(self.train_dataloader), epoch)

    @torch.no_grad()
    def _validation_epoch(self, epoch):
        mse_clean_denoised = []
        for i, (noisy_mag, clean_mag, name) in enumerate(self.validation_dataloader):
            noisy_mag = noisy_mag.to(self.device)
            clean_mag = clean_mag.to(self.device)

            pred_mask = self.model(noisy_mag)
            enhanced = noisy_mag * pred_mask

            mse_clean_denoised.append(torch.mean((enhanced - clean_mag) ** 2).item())
            if i == 0:
                self.writer.add_text("Validation/first", name[0], epoch)

        score = -float(np.mean(mse_clean_denoised))
        self.writer.add_scalar("Metrics/NegMSE", score, epoch)
        return score
