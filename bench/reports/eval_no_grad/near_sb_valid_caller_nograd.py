# Source: https://github.com/speechbrain/speechbrain/blob/9c826ef3937bac885c8a6ca86c6889a30f256fb5/speechbrain/core.py
# Report: SpeechBrain Brain._fit_valid() as in the repo: the validation loop is wrapped in torch.no_grad() by the caller, while evaluate_batch() has no grad-disabled context of its own
# Shape: evaluate_batch's forward runs inside the caller's `with torch.no_grad():` (its only call site), and it returns loss.detach().cpu() reduced with float() in update_average
# Expect: near-miss: must be silent
import torch
from enum import Enum, auto
from tqdm import tqdm


class Stage(Enum):
    TRAIN = auto()
    VALID = auto()
    TEST = auto()


class Brain:
    def __init__(self, modules, opt_class, hparams, checkpointer=None):
        self.modules = torch.nn.ModuleDict(modules).to("cuda")
        self.optimizer = opt_class(self.modules.parameters())
        self.hparams = hparams
        self.checkpointer = checkpointer
        self.step = 0
        self.avg_train_loss = 0.0

    def update_average(self, loss, avg_loss):
        if torch.isfinite(loss):
            avg_loss -= avg_loss / self.step
            avg_loss += float(loss) / self.step
        return avg_loss

    def evaluate_batch(self, batch, stage):
        out = self.compute_forward(batch, stage=stage)
        loss = self.compute_objectives(out, batch, stage=stage)
        return loss.detach().cpu()

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch, Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, Stage.TRAIN)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach().cpu()

    def _fit_train(self, train_set, epoch):
        self.modules.train()
        self.avg_train_loss = 0.0
        for batch in tqdm(train_set, dynamic_ncols=True):
            self.step += 1
            loss = self.fit_batch(batch)
            self.avg_train_loss = self.update_average(loss, self.avg_train_loss)
        self.step = 0

    def _fit_valid(self, valid_set, epoch):
        if valid_set is None:
            return
        self.modules.eval()
        avg_valid_loss = 0.0
        with torch.no_grad():
            for batch in tqdm(valid_set, dynamic_ncols=True):
                self.step += 1
                loss = self.evaluate_batch(batch, stage=Stage.VALID)
                avg_valid_loss = self.update_average(loss, avg_valid_loss)
            self.step = 0
            self.on_stage_end(Stage.VALID, avg_valid_loss, epoch)

    def fit(self, epoch_counter, train_set, valid_set=None):
        for epoch in epoch_counter:
            self._fit_train(train_set, epoch)
            self._fit_valid(valid_set, epoch)

    def on_stage_end(self, stage, stage_loss, epoch):
        print(f"epoch {epoch} {stage.name} loss {stage_loss:.3f}")


class CTCBrain(Brain):
    def compute_forward(self, batch, stage):
        wavs, wav_lens = batch.sig
        wavs, wav_lens = wavs.to("cuda"), wav_lens.to("cuda")
        feats = self.hparams.compute_features(wavs)
        feats = self.modules.normalize(feats, wav_lens)
        x = self.modules.encoder(feats)
        logits = self.modules.ctc_lin(x)
        return self.hparams.log_softmax(logits), wav_lens

    def compute_objectives(self, predictions, batch, stage):
        p_ctc, wav_lens = predictions
        tokens, tokens_lens = batch.tokens
        return self.hparams.ctc_cost(p_ctc, tokens.to("cuda"), wav_lens, tokens_lens.to("cuda"))
