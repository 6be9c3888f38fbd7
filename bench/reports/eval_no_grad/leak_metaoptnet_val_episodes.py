# Source: https://github.com/kjunelee/MetaOptNet/blob/010273cd668cbbe2866ec2e555ab98ea37ff583b/train.py
# Report: audited bug: after each meta-training epoch the validation episodes run embedding_net/cls_head after .eval() with no torch.no_grad(); issue kjunelee/MetaOptNet#6 reports OOM at epoch 2, right after the first validation (cause not confirmed in the thread)
# Shape: validation is moved into a helper validate_episodes(); the forward passes still run with grad enabled (only .item() values are kept, so it is a peak, not growth)
# Expect: TML003 line 44; TML003 line 47
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm


def count_accuracy(logits, label):
    pred = torch.argmax(logits, dim=1).view(-1)
    label = label.view(-1)
    return 100 * pred.eq(label).float().mean()


def one_hot(indices, depth):
    encoded = torch.zeros(indices.size() + torch.Size([depth])).cuda()
    index = indices.view(indices.size() + torch.Size([1]))
    return encoded.scatter_(1, index, 1)


def split_episode(emb, n_support, n_query):
    emb_support = emb[:n_support].reshape(1, n_support, -1)
    emb_query = emb[n_support:n_support + n_query].reshape(1, n_query, -1)
    return emb_support, emb_query


def validate_episodes(opt, embedding_net, cls_head, dloader_val, epoch):
    x_entropy = torch.nn.CrossEntropyLoss()
    _, _ = [x.eval() for x in (embedding_net, cls_head)]

    val_accuracies = []
    val_losses = []

    for i, batch in enumerate(tqdm(dloader_val(epoch)), 1):
        data_support, labels_support, data_query, labels_query, _, _ = [x.cuda() for x in batch]

        test_n_support = opt.test_way * opt.val_shot
        test_n_query = opt.test_way * opt.val_query

        images = torch.cat([data_support.reshape([-1] + list(data_support.shape[-3:])),
                            data_query.reshape([-1] + list(data_query.shape[-3:]))])
        emb = embedding_net(images)  # expect: TML003
        emb_support, emb_query = split_episode(emb, test_n_support, test_n_query)

        logit_query = cls_head(emb_query, emb_support, labels_support, opt.test_way, opt.val_shot)  # expect: TML003

        loss = x_entropy(logit_query.reshape(-1, opt.test_way), labels_query.reshape(-1))
        acc = count_accuracy(logit_query.reshape(-1, opt.test_way), labels_query.reshape(-1))

        val_accuracies.append(acc.item())
        val_losses.append(loss.item())

    val_acc_avg = np.mean(np.array(val_accuracies))
    val_acc_ci95 = 1.96 * np.std(np.array(val_accuracies)) / np.sqrt(opt.val_episode)
    return np.mean(np.array(val_losses)), val_acc_avg, val_acc_ci95


def train_epoch(opt, embedding_net, cls_head, optimizer, dloader_train, epoch):
    _, _ = [x.train() for x in (embedding_net, cls_head)]
    train_losses = []
    for i, batch in enumerate(tqdm(dloader_train(epoch)), 1):
        data_support, labels_support, data_query, labels_query, _, _ = [x.cuda() for x in batch]
        n_support = opt.train_way * opt.train_shot
        n_query = opt.train_way * opt.train_query
        emb_support = embedding_net(data_support.reshape([-1] + list(data_support.shape[-3:])))
        emb_support = emb_support.reshape(opt.episodes_per_batch, n_support, -1)
        emb_query = embedding_net(data_query.reshape([-1] + list(data_query.shape[-3:])))
        emb_query = emb_query.reshape(opt.episodes_per_batch, n_query, -1)
        logit_query = cls_head(emb_query, emb_support, labels_support, opt.train_way, opt.train_shot)
        log_prb = F.log_softmax(logit_query.reshape(-1, opt.train_way), dim=1)
        loss = F.nll_loss(log_prb, labels_query.reshape(-1))
        train_losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return float(np.mean(train_losses))
