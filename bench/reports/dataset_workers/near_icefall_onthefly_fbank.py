# Source: https://github.com/k2-fsa/icefall/issues/666
# Report: the setup that works in the issue: on-the-fly kaldifeat fbank kept on the CPU inside the DataLoader workers (the GPU variant failed with "Cannot re-initialize CUDA in forked subprocess")
# Shape: __getitem__ keeps waveforms and fbank on the CPU; the padded features move to the GPU only in the training loop of the main process
# Expect: near-miss: must be silent

import argparse
import logging
from typing import Dict

import kaldifeat
import torch
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import default_collate


class OnTheFlyAsrDataset(torch.utils.data.Dataset):
    """K2SpeechRecognitionDataset-style dataset computing fbank per batch of cuts."""

    def __init__(self, num_mel_bins: int = 80, return_cuts: bool = False):
        super().__init__()
        opts = kaldifeat.FbankOptions()
        opts.device = torch.device("cpu")
        opts.frame_opts.dither = 0
        opts.frame_opts.samp_freq = 16000
        opts.mel_opts.num_bins = num_mel_bins
        self.fbank = kaldifeat.Fbank(opts)
        self.return_cuts = return_cuts

    def __getitem__(self, cuts: CutSet) -> Dict:
        cuts = cuts.sort_by_duration(ascending=False)
        waves = [torch.from_numpy(c.load_audio()[0]) for c in cuts]
        feats = self.fbank(waves)
        num_frames = [f.size(0) for f in feats]
        inputs = torch.nn.utils.rnn.pad_sequence(feats, batch_first=True, padding_value=-23.0)
        supervisions = default_collate([
            {
                "sequence_idx": idx,
                "text": sup.text,
                "start_frame": 0,
                "num_frames": num_frames[idx],
            }
            for idx, cut in enumerate(cuts)
            for sup in cut.supervisions
        ])
        batch = {"inputs": inputs, "supervisions": supervisions}
        if self.return_cuts:
            batch["supervisions"]["cut"] = [cut for cut in cuts]
        return batch


class AsrDataModule:
    def __init__(self, args: argparse.Namespace):
        self.args = args

    def train_dataloaders(self, cuts_train: CutSet) -> DataLoader:
        logging.info("About to create train dataset (on-the-fly fbank)")
        train = OnTheFlyAsrDataset(num_mel_bins=80, return_cuts=self.args.return_cuts)
        train_sampler = DynamicBucketingSampler(
            cuts_train,
            max_duration=self.args.max_duration,
            shuffle=self.args.shuffle,
            num_buckets=self.args.num_buckets,
            drop_last=True,
        )
        return DataLoader(
            train,
            sampler=train_sampler,
            batch_size=None,
            num_workers=self.args.num_workers,
            persistent_workers=False,
        )


def train_one_epoch(model, optimizer, train_dl, compute_loss, device):
    model.train()
    for batch_idx, batch in enumerate(train_dl):
        feature = batch["inputs"].to(device)
        loss = compute_loss(model, feature, batch["supervisions"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch_idx % 50 == 0:
            logging.info(f"batch {batch_idx}, loss {loss.item():.4f}")
