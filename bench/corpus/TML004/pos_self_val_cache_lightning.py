# Modelled on: https://github.com/WENGSYX/CMIVQA_Baseline/issues/12
# Report: OOM in the test loop even with batch size 1 on a 24 GB GPU; the per-batch logits were kept.
import pytorch_lightning as pl
import torch


class LitSpanModel(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.test_logits = []

    def test_step(self, batch, batch_idx):
        logits = self.net(batch["input_ids"], batch["attention_mask"])
        self.test_logits.append(logits)  # expect: TML004

    def on_test_epoch_end(self):
        all_logits = torch.cat(self.test_logits)
        self.log("n_test", float(all_logits.size(0)))
