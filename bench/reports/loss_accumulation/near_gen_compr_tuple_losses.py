# Source: https://github.com/resteves-99/gen-compr-2/blob/665ec1a57e553065d207b6419885f92ea23d156a/trainers/conv_autoencoder.py
# Report: commit 665ec1a "fixed memory issue" in the CelebA autoencoder-GAN trainer: the progress-bar postfix and the per-batch train_loss tuple now receive float(g_loss) / float(d_loss) instead of the loss tensors
# Shape: same loop, same growing tuple train_loss += (...), same retain_graph on the occasional discriminator backward (not the last backward of the step); only Python floats are concatenated onto the tuple
# Expect: near-miss: must be silent
import torch
from torch.autograd import Variable
from tqdm import tqdm

from models.ae_baseline import baseline_autoencoder, baseline_discriminator


def to_img(x):
    x = 0.5 * (x + 1)
    x = x.clamp(0, 1)
    x = x.view(x.size(0), 3, 216, 178)
    return x


def train(args, train_dataloader, val_dataloader, loss_function, log, example_dir):
    gen_model = baseline_autoencoder(args)
    disc_model = baseline_discriminator(args)
    if torch.cuda.is_available():
        gen_model.cuda()
        disc_model.cuda()

    disc_optimizer = torch.optim.Adam(gen_model.parameters(), lr=args.lr)
    gen_optimizer = torch.optim.Adam(disc_model.parameters(), lr=args.lr)
    real_label = Variable(torch.ones(args.batch_size)).cuda()
    fake_label = Variable(torch.zeros(args.batch_size)).cuda()

    for epoch in range(args.num_epochs):
        log.info(f'Epoch: {epoch}')
        gen_model.train()
        disc_model.train()
        train_loss = (0, 0)
        index = 0
        with torch.enable_grad(), tqdm(total=152000) as progress_bar:
            for batch_idx, data in enumerate(train_dataloader):
                img, _ = data
                img.resize_((args.batch_size, 3, 218, 178))
                if torch.cuda.is_available():
                    img = img.cuda()

                recon_batch = gen_model(img)
                img.resize_((16, 3, 216, 178))

                real_output = disc_model(img)
                fake_output = disc_model(recon_batch)

                d_loss_fake = loss_function(fake_output, fake_label)
                d_loss_real = loss_function(real_output, real_label)
                d_loss = d_loss_real + d_loss_fake
                if index % 5 == 0:
                    disc_optimizer.zero_grad()
                    d_loss.backward(retain_graph=True)
                    disc_optimizer.step()

                g_loss = loss_function(fake_output, real_label)
                gen_optimizer.zero_grad()
                g_loss.backward()
                gen_optimizer.step()

                progress_bar.update(index)
                progress_bar.set_postfix(epoch=epoch, Gen_Loss=float(g_loss), Disc_Loss=float(d_loss))
                train_loss += (float(g_loss), float(d_loss))
                index += 1

        log.info('====> Epoch: {} Average loss: {}'.format(epoch, train_loss))
        if epoch % 5 == 0:
            log.info('saving example images for epoch {}'.format(epoch))
            recon = to_img(recon_batch.cpu().data)
            real = to_img(img.cpu().data)
            torch.save({'recon': recon, 'real': real}, example_dir + f'/images_epoch_{epoch}.pt')

    return gen_model, disc_model
