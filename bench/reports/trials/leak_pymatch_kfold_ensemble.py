# Source: https://github.com/raharth/PyMatch/blob/6cec8d1ecb08a7a1595e7692913a1ed007f84a2f/pymatch/DeepLearning/ensemble.py
# Report: raharth/PyMatch#23 "OOM issue when training ensembles": with many k-fold / ensemble members the last ones run out of memory, "it stores all models in memory for the entire training ... also it seems to accumulate memory"; Ensemble.run_validation collects every learner's validation predictions as GPU tensors, batch by batch and fold by fold
# Shape: kept: one learner per fold built by a factory, all held in self.learners; the learner's forward (no_grad, eval, model(X.to(device))) is inlined into run_validation; the save_memory branch (del learner; torch.cuda.empty_cache()) is left out
# Expect: TML004 line 59; TML004 line 60
import torch
from torch import nn, optim


class ClassificationLearner:
    def __init__(self, model, optimizer, crit, train_loader, val_loader, name=''):
        self.model = model
        self.optimizer = optimizer
        self.crit = crit
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.name = name
        self.train_dict = {'train_losses': []}

    def fit(self, epochs, device):
        self.model.train()
        self.model.to(device)
        for epoch in range(epochs):
            losses = []
            for data, labels in self.train_loader:
                data, labels = data.to(device), labels.to(device)
                y_pred = self.model(data)
                loss = self.crit(y_pred, labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                losses += [loss.item()]
            self.train_dict['train_losses'] += [sum(losses) / len(losses)]


class Ensemble:
    def __init__(self, model_class, trainer_factory, n_model, trainer_args):
        self.learners = []
        for i in range(n_model):
            t_args = dict(trainer_args)
            t_args['name'] = f"{trainer_args.get('name', '')}_{i}"
            self.learners.append(trainer_factory(model_class, fold=i, **t_args))

    def fit(self, epochs, device):
        for learner in self.learners:
            print(f'Trainer {learner.name}')
            learner.fit(epochs=epochs, device=device)

    def run_validation(self, device='cpu'):
        y_pred_learners = []
        y_true_learners = []
        for learner in self.learners:
            learner.model.eval()
            learner.model.to(device)
            y_pred = []
            y_true = []
            with torch.no_grad():
                for X, y in learner.val_loader:
                    y_true += [y]
                    y_pred += [learner.model(X.to(device))]  # expect: TML004
            y_pred_learners += [torch.cat(y_pred)]  # expect: TML004
            y_true_learners += [torch.cat(y_true)]
        return y_pred_learners, y_true_learners


def factory(model_class, kfold, fold, device, lr, momentum, name, n_classes):
    model = model_class(n_classes=n_classes).to(device)
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    crit = nn.CrossEntropyLoss().to(device)
    train_loader, val_loader = kfold.fold_loaders(fold=fold)
    return ClassificationLearner(model, optimizer, crit, train_loader, val_loader, name=name)


def main(model_class, kfold, settings, device='cuda'):
    params = {'kfold': kfold, 'device': device, 'lr': settings['lr'], 'momentum': settings['momentum'],
              'name': 'kfold', 'n_classes': settings['n_classes']}
    ensemble = Ensemble(model_class, factory, n_model=settings['folds'], trainer_args=params)
    ensemble.fit(epochs=settings['epochs'], device=device)
    y_pred_learners, y_true_learners = ensemble.run_validation(device=device)
    accs = [(p.argmax(dim=1).cpu() == t).float().mean().item() for p, t in zip(y_pred_learners, y_true_learners)]
    print('fold accuracies:', accs)
