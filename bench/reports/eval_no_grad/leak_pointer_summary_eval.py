# Source: https://github.com/hashbangCoder/Text-Summarization/issues/2
# Report: memory grows every iteration of main.py until OOM; main.py's evalModel ran beam search on volatile=True Variables (the pre-0.4 no_grad), rewritten here for torch>=0.4 with that safeguard dropped
# Shape: evalModel calls model.eval() and runs the pointer-generator beam-search forward (decode_flag=True) with grad enabled; summaries are returned to the training loop and saved in the checkpoint dict
# Expect: TML003 line 27

import os
import pickle

import numpy as np
import torch
from torch.nn.utils import clip_grad_norm_

import dataloader
import models
from config import opt


def evalModel(model, dl):
    """Run one beam-search decode on an eval sample."""
    model.eval()
    print('*' * 30, ' MODEL EVALUATION ', '*' * 30)
    (article, rev_article, ext_article, max_article_oov,
     article_oov, article_string, abs_string) = dl.getEvalBatch()
    article = article.cuda()
    ext_article = ext_article.cuda()
    rev_article = rev_article.cuda()
    all_summaries = model((article, rev_article, ext_article), max_article_oov, decode_flag=True)  # expect: TML003
    model.train()
    return all_summaries, article_string, abs_string, article_oov


def displayOutput(dl, all_summaries, article, abstract, article_oov, show_ground_truth=False):
    if show_ground_truth:
        print('ARTICLE TEXT : \n', article)
        print('ACTUAL ABSTRACT : \n', abstract)
    for i, summary in enumerate(all_summaries):
        words = [dl.id2word[ind] if ind < dl.vocabSize else article_oov[ind % dl.vocabSize]
                 for ind in summary]
        print('GENERATED ABSTRACT #%d : \n' % (i + 1), ' '.join(words))


def save_model(dl, net, optimizer, all_summaries, article_string, abs_string):
    save_dict = {'model': net.state_dict(), 'optim': optimizer.state_dict(),
                 'epoch': dl.epoch, 'iter': dl.iterInd, 'summaries': all_summaries,
                 'article': article_string, 'abstract_gold': abs_string}
    save_name = os.path.join(opt.save_dir, 'savedModel_E%d_%d.pth' % (dl.epoch, dl.iterInd))
    torch.save(save_dict, save_name)


def main():
    with open(opt.vocab_file, 'rb') as f:
        vocab = [item[0] for item in pickle.load(f)[:opt.trunc_vocab]]
    vocab += ['<unk>', '<go>', '<end>', '<s>', '</s>']
    dl = dataloader.dataloader(opt.batchSize, opt.epochs, vocab, opt.train_file, opt.test_file,
                               opt.max_article_size, opt.max_abstract_size)
    word_embed = torch.nn.Embedding(len(vocab) + 1, opt.embedSize, 0)
    net = models.SummaryNet(opt.embedSize, opt.hiddenSize, dl.vocabSize, word_embed,
                            start_id=dl.word2id['<go>'], stop_id=dl.word2id['<end>'],
                            unk_id=dl.word2id['<unk>'], max_decode=opt.max_decode,
                            beam_size=opt.beam_size, lmbda=opt.lmbda).cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=opt.lr)

    all_loss = []
    while dl.epoch <= opt.epochs:
        data_batch = dl.getBatch(opt.batchSize)
        if data_batch is None:
            break
        (articles, ext_articles, rev_articles, abstracts, targets,
         _, _, max_article_oov, article_oov) = data_batch
        inputs = (articles.cuda(), ext_articles.cuda(), rev_articles.cuda(),
                  abstracts.cuda(), targets.cuda())

        losses = net(inputs, max_article_oov)
        batch_loss = losses.mean()
        batch_loss.backward()
        clip_grad_norm_(net.parameters(), opt.grad_clip)
        optimizer.step()
        optimizer.zero_grad()

        dl.pbar.set_postfix(loss=batch_loss.item())
        dl.pbar.update(opt.batchSize)
        if dl.iterInd % 50:
            all_loss.append(batch_loss.item())

        if dl.iterInd % opt.eval_freq < opt.batchSize and dl.iterInd > opt.batchSize:
            all_summaries, article_string, abs_string, article_oov = evalModel(net, dl)
            displayOutput(dl, all_summaries, article_string, abs_string, article_oov,
                          show_ground_truth=opt.print_ground_truth)
            if dl.iterInd % (6 * opt.eval_freq) < opt.batchSize:
                save_model(dl, net, optimizer, all_summaries, article_string, abs_string)


if __name__ == '__main__':
    main()
