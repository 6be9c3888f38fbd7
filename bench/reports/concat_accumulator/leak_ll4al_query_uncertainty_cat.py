# Source: https://github.com/euphoria0-0/Learning-Loss-for-Active-Learning/blob/af3f954b94996335b6cb171bf7ada827b6427cec/src/trainer/active_learner.py
# Report: audited code; a user reports CUDA OOM and multi-day runs with this repository (issue https://github.com/euphoria0-0/Learning-Loss-for-Active-Learning/issues/12, cause not established there). LearningLoss.query() scores the unlabeled subset each active-learning cycle and grows the uncertainty vector with torch.cat((uncertainty, pred_loss.cpu().data), 0) once per batch.
# Shape: same ActiveLearner / LearningLoss classes; the running torch.cat re-copies the whole uncertainty vector every batch (quadratic copying); the per-batch torch.cuda.empty_cache() of the original is left out.
# Expect: TML008 line 72
import numpy as np
import torch
from tqdm import tqdm
from torch.utils.data import DataLoader
from torch.utils.data.sampler import SubsetRandomSampler


class ActiveLearner:
    def __init__(self, dataset, args):
        self.dataset = dataset
        self.init_size = args.query_size[0]
        self.device = args.device
        self.nTrain = args.nTrain
        self.args = args
        self.loader_args = {'batch_size': args.batch_size, 'pin_memory': True, 'shuffle': False}
        self._init_setting()

    def _init_setting(self):
        total_indices = np.arange(self.nTrain)
        self.labeled_indices = np.random.choice(total_indices, self.init_size, replace=False).tolist()
        self.unlabeled_indices = list(set(total_indices) - set(self.labeled_indices))
        self.dataloaders = self._get_dataloaders()

    def _get_dataloaders(self):
        return {
            'train': DataLoader(self.dataset['train'], **self.loader_args,
                                sampler=SubsetRandomSampler(self.labeled_indices)),
            'unlabeled': DataLoader(self.dataset['unlabeled'], **self.loader_args,
                                    sampler=SubsetRandomSampler(self.unlabeled_indices)),
            'test': DataLoader(self.dataset['test'], **self.loader_args),
        }

    def update(self, query_indices):
        self.labeled_indices += query_indices
        self.unlabeled_indices = list(set(self.unlabeled_indices) - set(query_indices))
        self.dataloaders = self._get_dataloaders()

    def get_current_dataloaders(self):
        return self.dataloaders

    def query(self, nQuery, model):
        raise NotImplementedError


class LearningLoss(ActiveLearner):
    def __init__(self, dataset, args):
        super().__init__(dataset, args)
        self.subset = args.subset

    def query(self, nQuery, model):
        if self.subset is not None:
            subset = np.random.choice(self.unlabeled_indices, self.subset, replace=False)
        else:
            subset = np.array(self.unlabeled_indices)
        unlabeled_loader = DataLoader(self.dataset['unlabeled'], **self.loader_args,
                                      sampler=SubsetRandomSampler(subset))
        model['backbone'].eval()
        model['module'].eval()

        uncertainty = torch.tensor([])
        with torch.no_grad():
            for data in tqdm(unlabeled_loader, desc='> inference of unlabeled data'):
                inputs = data[0].to(self.device)
                _ = model['backbone'](inputs)
                features = model['backbone'].get_features()
                pred_loss = model['module'](features)
                pred_loss = pred_loss.view(pred_loss.size(0))
                uncertainty = torch.cat((uncertainty, pred_loss.cpu().data), 0)  # expect: TML008

        arg = np.argsort(uncertainty.numpy())[-nQuery:]
        query_indices = subset[arg].tolist()
        self.update(query_indices)


def run_cycles(learner, trainer, model, args):
    accs = []
    for cycle in range(args.cycles):
        trainer.dataloaders = learner.get_current_dataloaders()
        trainer.train()
        accs.append(trainer.test(model, cycle))
        learner.query(args.query_size[1], model)
    return accs
