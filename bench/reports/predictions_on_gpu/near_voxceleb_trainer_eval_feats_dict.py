# Source: https://github.com/clovaai/voxceleb_trainer/blob/1cdba761cb9cdd897770d7fc484b03019f756728/SpeakerNet.py
# Report: audited idiom: evaluateFromList extracts one speaker embedding per test utterance under torch.no_grad() and stores `.detach().cpu()` copies in a dict keyed by file name before scoring all trials
# Shape: same @torch.no_grad() helper and per-file dict, but the helper returns `ref_feat.detach().cpu()` as upstream does, so the dict holds host tensors; scoring moves each pair back to the GPU only for one trial
# Expect: near-miss: must be silent
import itertools
import random

import numpy
import torch
import torch.nn.functional as F
from tqdm import tqdm

from DatasetLoader import test_dataset_loader


class ModelTrainer:
    def __init__(self, speaker_model, gpu, **kwargs):
        self.__model__ = speaker_model
        self.gpu = gpu
        self.device = torch.device(f"cuda:{gpu}")

    @torch.no_grad()
    def _embed(self, inp1):
        ref_feat = self.__model__(inp1)
        return ref_feat.detach().cpu()

    def _score(self, ref_feat, com_feat, num_eval):
        if self.__model__.module.__L__.test_normalize:
            ref_feat = F.normalize(ref_feat, p=2, dim=1)
            com_feat = F.normalize(com_feat, p=2, dim=1)
        dist = torch.cdist(ref_feat.reshape(num_eval, -1), com_feat.reshape(num_eval, -1))
        return -1 * numpy.mean(dist.cpu().numpy())

    def evaluateFromList(self, test_list, test_path, nDataLoaderThread, num_eval=10, **kwargs):
        self.__model__.eval()
        feats = {}
        with open(test_list) as f:
            lines = f.readlines()

        files = list(itertools.chain(*[x.strip().split()[-2:] for x in lines]))
        setfiles = sorted(set(files))
        test_dataset = test_dataset_loader(setfiles, test_path, num_eval=num_eval, **kwargs)
        test_loader = torch.utils.data.DataLoader(
            test_dataset, batch_size=1, shuffle=False, num_workers=nDataLoaderThread, drop_last=False)

        ## Extract features for every utterance
        with tqdm(test_loader, unit="utt", desc="Extracting") as tepoch:
            for data in tepoch:
                inp1 = data[0][0].to(self.device)
                ref_feat = self._embed(inp1)
                feats[data[1][0]] = ref_feat

        all_scores, all_labels, all_trials = [], [], []
        with tqdm(lines, unit="trial", desc="Scoring") as tepoch:
            for line in tepoch:
                data = line.split()
                if len(data) == 2:
                    data = [random.randint(0, 1)] + data
                ref_feat = feats[data[1]].to(self.device)
                com_feat = feats[data[2]].to(self.device)
                all_scores.append(self._score(ref_feat, com_feat, num_eval))
                all_labels.append(int(data[0]))
                all_trials.append(data[1] + " " + data[2])
        return (all_scores, all_labels, all_trials)
