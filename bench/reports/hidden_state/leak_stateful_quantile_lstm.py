# Source: https://github.com/AhmetZamanis/DeepLearningEnergyForecasting/blob/74126dbcd5dd25476cccfbd4de78b4ace1d00710/src/deep_learning/lstm.py
# Report: audit of a stateful quantile-LSTM energy forecaster (Lightning): training_step stores the LSTM's last (h, c) on self without detaching and feeds them to the next batch; an overridden backward() passes retain_graph=True on every batch but the last, so each batch's graph links to all earlier ones until the epoch ends
# Shape: a LightningModule keeps self._train_state, rebinding it from the forward call that reads it; backward() is overridden to retain the graph so the chained state can be backpropagated again
# Expect: TML005 line 49; TML006 line 45
import lightning as L
import torch


class QuantileLoss(torch.nn.Module):
    def __init__(self, quantiles):
        super().__init__()
        self.register_buffer("q", torch.tensor(quantiles))

    def forward(self, preds, target):
        errors = target.unsqueeze(-1) - preds
        return torch.max((self.q - 1) * errors, self.q * errors).mean()


class StatefulQuantileLSTM(L.LightningModule):
    """Hidden & cell states are carried from batch to batch within an epoch."""

    def __init__(self, hparams):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.quantiles = hparams["quantiles"]
        self.output_length = hparams["output_length"]
        self.lstm = torch.nn.LSTM(hparams["input_size"], hparams["hidden_size"],
                                  num_layers=hparams["num_layers"], batch_first=True)
        self.head = torch.nn.Linear(hparams["hidden_size"],
                                    self.output_length * len(self.quantiles))
        self.loss_fn = QuantileLoss(self.quantiles)
        self.learning_rate = hparams["learning_rate"]
        self._train_state = None

    def forward(self, input_chunk, prev_states=None):
        lstm_out, states = self.lstm(input_chunk, prev_states)
        preds = self.head(lstm_out[:, -1, :])
        return preds.view(-1, self.output_length, len(self.quantiles)), states

    # keep the graph so the carried state can be backpropagated next batch
    def backward(self, loss, *args, **kwargs):
        if self.trainer.is_last_batch:
            loss.backward()
        else:
            loss.backward(retain_graph=True)  # expect: TML006

    def training_step(self, batch, batch_idx):
        inputs, targets = batch
        preds, self._train_state = self(inputs, self._train_state)  # expect: TML005
        loss = self.loss_fn(preds, targets[:, :, 0])
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        self._train_state = None

    def validation_step(self, batch, batch_idx):
        inputs, targets = batch
        preds, _ = self(inputs, self._train_state)
        loss = self.loss_fn(preds, targets[:, :, 0])
        self.log("val_loss", loss, on_epoch=True, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
