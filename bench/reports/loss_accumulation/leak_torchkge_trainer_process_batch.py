# Source: https://github.com/torchkge-team/torchkge/blob/0ad6b89bb013bbb84d726d90085c8088e77d498d/torchkge/utils/training.py
# Report: audited correct idiom: Trainer.process_batch returns loss.detach().item() and Trainer.run sums the returned floats into sum_ for the epoch's mean loss
# Shape: leak made by removing the safeguard: process_batch returns the loss tensor itself, so run() accumulates graph-attached CUDA scalars into sum_ across all batches of the epoch (the value travels through a method's return)
# Expect: TML001 line 68
from tqdm.autonotebook import tqdm

from torchkge.sampling import BernoulliNegativeSampler, UniformNegativeSampler
from torchkge.utils.data_utils import get_n_batches


class TrainDataLoader:
    def __init__(self, kg, batch_size, sampling_type, use_cuda=None):
        self.h, self.t, self.r = kg.head_idx, kg.tail_idx, kg.relations
        self.use_cuda = use_cuda
        self.b_size = batch_size
        if sampling_type == 'unif':
            self.sampler = UniformNegativeSampler(kg)
        else:
            self.sampler = BernoulliNegativeSampler(kg)
        if use_cuda == 'all':
            self.h, self.t, self.r = self.h.cuda(), self.t.cuda(), self.r.cuda()

    def __len__(self):
        return get_n_batches(len(self.h), self.b_size)

    def __iter__(self):
        nh, nt = self.sampler.corrupt_kg(self.b_size, self.use_cuda in ['batch', 'all'])
        for i in range(len(self)):
            sl = slice(i * self.b_size, (i + 1) * self.b_size)
            yield {'h': self.h[sl], 't': self.t[sl], 'r': self.r[sl], 'nh': nh[sl], 'nt': nt[sl]}


class Trainer:
    def __init__(self, model, criterion, kg_train, use_gpu, lr, n_triples, n_epochs, n_batches,
                 optimizer, sampling_type='bern'):
        self.model = model
        self.criterion = criterion
        self.kg_train = kg_train
        self.use_gpu = use_gpu
        self.lr = lr
        self.n_triples = n_triples
        self.n_epochs = n_epochs
        self.batch_size = int(len(kg_train) / n_batches) + 1
        self.optimizer = optimizer
        self.sampling_type = sampling_type

    def process_batch(self, current_batch):
        self.optimizer.zero_grad()
        h, t, r = current_batch['h'], current_batch['t'], current_batch['r']
        nh, nt = current_batch['nh'], current_batch['nt']
        p, n = self.model(h, t, nh, nt, r)
        loss = self.criterion(p, n)
        loss.backward()
        self.optimizer.step()
        return loss

    def run(self):
        if self.use_gpu:
            self.model.cuda()
            self.criterion.cuda()
        iterator = tqdm(range(self.n_epochs), unit='epoch')
        data_loader = TrainDataLoader(self.kg_train, batch_size=self.batch_size,
                                      sampling_type=self.sampling_type, use_cuda='all')
        for epoch in iterator:
            sum_ = 0
            for i, batch in enumerate(data_loader):
                loss = self.process_batch(batch)
                sum_ += loss  # expect: TML001
            iterator.set_description(
                'Epoch {} | mean loss: {:.5f}'.format(epoch + 1, sum_ / len(data_loader)))
            self.model.normalize_parameters()
